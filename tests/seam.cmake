# The seam: call_local / call_local_batch, stage adapters, the operation lock, backends.
dream_add_test(NAME test_seam SOURCES test_seam.c LIBS dream_seam FIXTURES tiny_models)
