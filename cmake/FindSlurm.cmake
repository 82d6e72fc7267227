# Debian ships no pkg-config file or CMake config for libslurm: find the header and library.
#   Slurm::slurm          libslurm (for programs: ddp-plan, tests)
#   Slurm::headers        headers only (for the SPANK plugin, which takes libslurm's symbols from
#                         the srun/slurmstepd process that loads it)
#   SLURM_PLUGIN_DIR      where Slurm loads plugins from
# A Slurm under a prefix of its own: -DSLURM_ROOT=PREFIX (or SLURM_ROOT in the environment, or
# that prefix in CMAKE_PREFIX_PATH) is searched before the system's.
find_path(SLURM_INCLUDE_DIR slurm/spank.h HINTS ${SLURM_ROOT} $ENV{SLURM_ROOT} PATH_SUFFIXES include)
find_library(SLURM_LIBRARY NAMES slurm HINTS ${SLURM_ROOT} $ENV{SLURM_ROOT} PATH_SUFFIXES lib64 lib)
# Slurm's plugin folder is its libdir's slurm/ (Debian: slurm-wlm/), beside the libslurm found:
# a site's Slurm under a prefix of its own has it there too.
if(SLURM_LIBRARY)
  get_filename_component(_slurm_libdir "${SLURM_LIBRARY}" DIRECTORY)
endif()
find_path(SLURM_PLUGIN_DIR NAMES cli_filter_lua.so spank_pbs.so select_cons_tres.so
  PATHS ${_slurm_libdir}/slurm ${_slurm_libdir}/slurm-wlm
        /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm-wlm /usr/lib64/slurm /usr/lib/slurm
  NO_DEFAULT_PATH)

if(SLURM_INCLUDE_DIR AND EXISTS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
  file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _slurm_ver
       REGEX "^#define SLURM_VERSION_STRING ")
  string(REGEX REPLACE ".*\"([0-9.]+).*" "\\1" Slurm_VERSION "${_slurm_ver}")
  # Debian's header has only SLURM_VERSION_NUMBER 0xMMmmuu (0x160508: 22.05.8).
  if(NOT Slurm_VERSION)
    file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _slurm_num
         REGEX "^#define SLURM_VERSION_NUMBER 0x[0-9a-fA-F]+")
    if(_slurm_num MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
      math(EXPR _major "0x${CMAKE_MATCH_1}")
      math(EXPR _minor "0x${CMAKE_MATCH_2}")
      math(EXPR _micro "0x${CMAKE_MATCH_3}")
      if(_minor LESS 10)
        set(_minor "0${_minor}")
      endif()
      set(Slurm_VERSION "${_major}.${_minor}.${_micro}")
    endif()
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Slurm
  REQUIRED_VARS SLURM_INCLUDE_DIR SLURM_LIBRARY
  VERSION_VAR Slurm_VERSION)

if(Slurm_FOUND AND NOT TARGET Slurm::slurm)
  add_library(Slurm::headers INTERFACE IMPORTED)
  set_target_properties(Slurm::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")
  add_library(Slurm::slurm UNKNOWN IMPORTED)
  set_target_properties(Slurm::slurm PROPERTIES
    IMPORTED_LOCATION "${SLURM_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")
endif()
mark_as_advanced(SLURM_INCLUDE_DIR SLURM_LIBRARY SLURM_PLUGIN_DIR)

# An installed program that links libslurm (slurm_program(TARGET)) finds it where the build did:
# a Slurm under a prefix of its own is outside the loader's search path; one in a system folder
# adds nothing to the program's run path.
function(slurm_program target)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endfunction()
