# Chat templates (src/template): unit tests and conformance against Python's Jinja2.
dream_add_test(NAME test_template SOURCES template/test_template.c LIBS dream_template)
dream_add_test(NAME test_template_conformance SOURCES template/test_template_conformance.c LIBS dream_template
               ARGS ${CMAKE_CURRENT_LIST_DIR}/template_reference.py TIMEOUT 900)
