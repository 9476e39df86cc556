# Chat templates (src/template): unit tests and conformance against Python's Jinja2.
dream_add_test(NAME test_template SOURCES test_template.c LIBS dream_template)
dream_add_test(NAME test_template_conformance SOURCES test_template_conformance.c LIBS dream_template
               ARGS ${CMAKE_CURRENT_SOURCE_DIR}/template_reference.py TIMEOUT 900)
