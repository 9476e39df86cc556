# Writes the tiny test models and their LoRA adapters (the ctest fixture `tiny_models`).
# Run as: cmake -DBIN=<dir with the tools> -DOUT=<models dir> -DLLAMA_SRC=<tree> -P make_tiny_models.cmake
# Other modules' tests rely on these exact file names; keep them.
foreach(v BIN OUT LLAMA_SRC)
  if(NOT ${v})
    message(FATAL_ERROR "make_tiny_models.cmake: -D${v}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${OUT})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

foreach(arch gemma4 qwen3)
  run(${BIN}/dream-make-model --arch ${arch} --preset tiny --type q8_0 --seed 42
      --llama-src ${LLAMA_SRC} -o ${OUT}/tiny-${arch}.gguf)
  run(${BIN}/dream-make-adapter --model ${OUT}/tiny-${arch}.gguf --rank 8 --targets attn_q,attn_v,ffn_up
      --init random --seed 43 -o ${OUT}/tiny-${arch}-lora.gguf)
endforeach()
