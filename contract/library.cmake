# ddp_contract_library(NAME): the contract's sources as a static library NAME, for each build that
# needs them with flags of its own: the plugin (contract/CMakeLists.txt), the sanitized plugin,
# libddp with LibTorch's flags (runtime/CMakeLists.txt) and the fuzz targets (tests/fuzz).
# Its symbols stay inside whatever links it.
function(ddp_contract_library name)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_library(${name} STATIC
    ${dir}/src/gap.cpp
    ${dir}/src/human_text.cpp
    ${dir}/src/liveness.cpp
    ${dir}/src/local_host.cpp
    ${dir}/src/names.cpp
    ${dir}/src/net_facts.cpp
    ${dir}/src/node_list.cpp
    ${dir}/src/parse.cpp
    ${dir}/src/port.cpp
    ${dir}/src/printable.cpp
    ${dir}/src/rank_places.cpp
    ${dir}/src/tasks_per_node.cpp
    ${dir}/src/trusted_dir.cpp
    ${dir}/src/udp.cpp)
  target_include_directories(${name} PUBLIC ${dir}/include ${PROJECT_BINARY_DIR}/generated)
  set_target_properties(${name} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# ddp_seal_library(NAME CONTRACT): the sealing of values and datagrams (seal.hpp) as a static
# library NAME on libcrypto, beside the contract library CONTRACT it was built with: libddp and
# the failure watch link it; the plugin does not.
function(ddp_seal_library name contract)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_library(${name} STATIC ${dir}/src/seal.cpp)
  target_include_directories(${name} PUBLIC ${dir}/include)
  target_link_libraries(${name} PUBLIC ${contract} OpenSSL::Crypto)
  set_target_properties(${name} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                                           POSITION_INDEPENDENT_CODE ON)
endfunction()
