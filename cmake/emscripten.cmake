# The Emscripten link flags, in one place. Included only under emcmake.
# Output: dist/attention_core.mjs + dist/attention_core.wasm (or ATTN_MODULE_NAME), one ES module
# that loads in browsers (wasm found through import.meta.url, streaming compile) and in Node 20
# (the --extern-pre-js shim serves file: URLs from disk).
set(ATTN_MODULE_NAME "attention_core" CACHE STRING "basename of the emitted .mjs/.wasm")
set(ATTN_DIST_DIR "${CMAKE_SOURCE_DIR}/dist" CACHE PATH "where the module is written")
# -DATTN_RELAXED_SIMD=ON: also the relaxed-SIMD twin, <name>_relaxed.mjs/.wasm (target
# attention_module_relaxed), from the same objects but the kernels (attn_relaxed_twin in CMakeLists.txt).
set(ATTN_RELAXED_DIST_DIR "${ATTN_DIST_DIR}" CACHE PATH "where the relaxed-SIMD twin is written")

# Every binding file (bindings.cpp, bindings_backward.cpp, ...): each holds its own
# EMSCRIPTEN_BINDINGS block. Cold code (conversions and messages), so built for size like the
# other cold files (see CMakeLists.txt).
# The bindings are the top layer (see the layer libraries in CMakeLists.txt): they see every layer.
# An OBJECT library, so that every file's EMSCRIPTEN_BINDINGS registration reaches the link (a
# static library would drop the files nothing references).
file(GLOB ATTN_BINDING_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/wasm/*.cpp)
set_source_files_properties(${ATTN_BINDING_SOURCES} PROPERTIES COMPILE_OPTIONS -Os)
add_library(attn_bindings OBJECT ${ATTN_BINDING_SOURCES})
attn_layer(attn_bindings wasm)
target_link_libraries(attn_bindings PUBLIC attn_train)
# -DATTN_THREADS=ON (docs/threads.md): Emscripten pthreads. The
# glue's Node branch runs the pool on worker_threads (so ENVIRONMENT includes node, and
# node_threads_shim.js gives it require/__dirname); the pool's workers are created before the module
# resolves (a page's main thread cannot wait for a worker to start), Module.attnThreads of them (1 by
# default); the emitted <name>.worker.js is a classic script, read as CommonJS through a package.json
# beside it (the package is "type": "module").
set(ATTN_ENVIRONMENT web,worker)
set(ATTN_THREAD_LINK_OPTIONS "")
if(ATTN_THREADS)
  set(ATTN_ENVIRONMENT web,worker,node)
  # SHELL: keeps the pair together (CMake de-duplicates link options, and --extern-pre-js comes twice).
  set(ATTN_THREAD_LINK_OPTIONS "-sPTHREAD_POOL_SIZE=Module.attnThreads||1"
      "SHELL:--extern-pre-js ${CMAKE_SOURCE_DIR}/src/wasm/node_threads_shim.js")
  file(WRITE ${ATTN_DIST_DIR}/package.json "{\"type\": \"commonjs\"}\n")
endif()

# attn_module(<target> <basename> <dir>): the ES module <dir>/<basename>.mjs + .wasm.
function(attn_module target name dir)
  add_executable(${target})
  target_link_libraries(${target} PRIVATE attn_bindings)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${name}
    SUFFIX ".mjs"
    RUNTIME_OUTPUT_DIRECTORY ${dir})
  target_link_options(${target} PRIVATE
    ${ATTN_THREAD_LINK_OPTIONS}
    --bind
    -O3
    -sMODULARIZE=1
    -sEXPORT_ES6=1
    -sEXPORT_NAME=createAttentionModule
    -sENVIRONMENT=${ATTN_ENVIRONMENT}
    -sALLOW_MEMORY_GROWTH=1
    -sMAXIMUM_MEMORY=4GB
    -sINITIAL_MEMORY=16MB
    -sFILESYSTEM=0
    -sMALLOC=emmalloc  # ~6 KB smaller than dlmalloc; we make few, large allocations
    -sEXPORTED_FUNCTIONS=_malloc,_free
    -sEXPORTED_RUNTIME_METHODS=HEAPU8,HEAPF32
    # No `new Function`/eval in the glue: Embind calls through generic invokers, so the module runs
    # under a strict Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval', no 'unsafe-eval')
    # and under node --disallow-code-generation-from-strings (tests/js/csp.test.mjs). Cost: README.
    -sDYNAMIC_EXECUTION=0
    --extern-pre-js ${CMAKE_SOURCE_DIR}/src/wasm/node_fetch_shim.js)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
    ${CMAKE_SOURCE_DIR}/src/wasm/node_fetch_shim.js)
endfunction()

attn_module(attention_module ${ATTN_MODULE_NAME} ${ATTN_DIST_DIR})
if(ATTN_RELAXED_SIMD)
  attn_module(attention_module_relaxed ${ATTN_MODULE_NAME}_relaxed ${ATTN_RELAXED_DIST_DIR})
  attn_relaxed_twin(attention_module_relaxed ${ATTN_RELAXED_DIST_DIR}/${ATTN_MODULE_NAME}_relaxed.wasm)
endif()
