# Load test of an OpenAI-compatible server (dream serve vs llama-server; bench/serve.sh drives it).
if(TARGET dream_serve)
  add_executable(serve_load ${CMAKE_CURRENT_LIST_DIR}/serve_load.c)
  target_compile_options(serve_load PRIVATE ${DREAM_WARNINGS})
  target_link_libraries(serve_load PRIVATE PkgConfig::CURL PkgConfig::JANSSON)
endif()
