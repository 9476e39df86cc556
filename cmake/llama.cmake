# Imports the pinned llama.cpp static libraries built by scripts/deps.sh.
# Inputs: LLAMA_SRC (source tree) and LLAMA_BUILD (its build tree).
# Provides: the imported target dream::llama (libllama + ggml backends + their system deps),
# and LLAMA_SRC for tests that read the tree's models/ (vocabularies, chat templates).
if(NOT LLAMA_SRC OR NOT LLAMA_BUILD)
  message(FATAL_ERROR "LLAMA_SRC and LLAMA_BUILD are not set. Build through the Makefile (make, make test), "
                      "which runs scripts/deps.sh to obtain the pinned llama.cpp and passes both.")
endif()
foreach(lib src/libllama.a ggml/src/libggml.a ggml/src/libggml-base.a ggml/src/libggml-cpu.a)
  if(NOT EXISTS ${LLAMA_BUILD}/${lib})
    message(FATAL_ERROR "${LLAMA_BUILD}/${lib} is missing; run scripts/deps.sh (make does) to build llama.cpp")
  endif()
endforeach()

find_package(OpenMP REQUIRED COMPONENTS C CXX)

add_library(dream::llama INTERFACE IMPORTED)
set(_llama_libs ${LLAMA_BUILD}/src/libllama.a ${LLAMA_BUILD}/ggml/src/libggml.a ${LLAMA_BUILD}/ggml/src/libggml-cpu.a)
if(DREAM_CUDA)
  find_package(CUDAToolkit REQUIRED)
  list(APPEND _llama_libs ${LLAMA_BUILD}/ggml/src/ggml-cuda/libggml-cuda.a)
endif()
list(APPEND _llama_libs ${LLAMA_BUILD}/ggml/src/libggml-base.a)
if(DREAM_CUDA)
  list(APPEND _llama_libs CUDA::cudart CUDA::cublas CUDA::cublasLt CUDA::cuda_driver)
  # ggml links NCCL when its build found it; a static libggml-cuda then needs it here too.
  load_cache(${LLAMA_BUILD} READ_WITH_PREFIX LLAMA_ NCCL_LIBRARY)
  if(LLAMA_NCCL_LIBRARY)
    list(APPEND _llama_libs ${LLAMA_NCCL_LIBRARY})
  endif()
endif()
target_link_libraries(dream::llama INTERFACE ${_llama_libs} OpenMP::OpenMP_CXX stdc++ m dl Threads::Threads)
target_include_directories(dream::llama INTERFACE ${LLAMA_SRC}/include ${LLAMA_SRC}/ggml/include)
if(DREAM_CUDA)
  target_compile_definitions(dream::llama INTERFACE DREAM_HAVE_CUDA=1)
endif()
set(LLAMA_SIMPLE ${LLAMA_BUILD}/bin/llama-simple)
