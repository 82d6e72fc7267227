# yaml-cpp's target under one name on every platform: 0.8 and later export yaml-cpp::yaml-cpp and
# mark the bare yaml-cpp deprecated (CMake warns; 0.10 removes it), 0.7 (Debian 12) exports only
# the bare one.
find_package(yaml-cpp REQUIRED)
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
