# The packages, with CPack: .deb, and .rpm where rpmbuild exists (build the .rpm on a RHEL host,
# where GNUInstallDirs gives lib64 and FindSlurm finds /usr/lib64/slurm).
#
#   .deb / .rpm                 component  install on                     depends on
#   slurm-spank-ddp             plugin     every Slurm node, login nodes  the Slurm series it was built for; nothing of Torch
#   libddp0 / libddp            runtime    nodes that run libddp programs the LibTorch it was built against
#   libddp-dev / libddp-devel   dev        where such programs are built  libddp0 of the same version, that LibTorch's -dev package
#   ddp-cifar100                trainer    nodes that run the trainer     libddp0 of the same version
#   ddp-preflight               preflight  nodes where --ddp-preflight runs libddp0 of the same version
#
# Slurm loads a SPANK plugin only if it was built for its own major.minor series
# (src/common/plugin.c), so the plugin package names the series in its version (Debian revision
# 1+slurm22.05, RPM release 1.slurm22.05) and depends on that series only. The name stays the same
# across series: with Slurm's next series in the site's repository, the plugin built for it is an
# upgrade of the one installed, and apt or dnf move both together; without it, the plugin's
# dependency holds Slurm back instead of leaving a plugin Slurm refuses.
#
# One cpack run gives all its packages one release, so the plugin is packaged in a run of its own,
# the others in a second (packaging/cpack-project.cmake.in):
#   cmake --build build --target packages     -> build/packages/*.deb (and *.rpm)
#   cpack -G DEB -D DDP_PACKAGES=plugin       the plugin package alone
#   cpack -G DEB -D DDP_PACKAGES=runtime      libddp0, libddp-dev, ddp-cifar100, ddp-preflight

# "22.05" and "22.06" from "22.05.8": the series and the first version after it, for dependencies
# that admit exactly one series. Empty when VERSION has no major.minor.
function(ddp_version_series version out_this out_next)
  set(${out_this} "" PARENT_SCOPE)
  set(${out_next} "" PARENT_SCOPE)
  if(version MATCHES "^([0-9]+)\\.([0-9]+)")
    set(minor "${CMAKE_MATCH_2}")
    math(EXPR next "${minor} + 1")
    string(LENGTH "${minor}" width)
    if(width EQUAL 2 AND next LESS 10)
      set(next "0${next}")  # Slurm writes 22.05
    endif()
    set(${out_this} "${CMAKE_MATCH_1}.${minor}" PARENT_SCOPE)
    set(${out_next} "${CMAKE_MATCH_1}.${next}" PARENT_SCOPE)
  endif()
endfunction()

set(DDP_PACKAGE_MAINTAINER "slurm-ddp maintainers <slurm-ddp@localhost>" CACHE STRING
    "Maintainer field of the .deb and Packager of the .rpm (name <email>)")
set(DDP_PACKAGE_LICENSE "LicenseRef-unspecified" CACHE STRING "License tag of the .rpm")
set(DDP_PACKAGE_RELEASE 1 CACHE STRING
    "Package release (Debian revision, RPM release); the plugin's adds the Slurm series")

set(CPACK_PACKAGE_NAME slurm-ddp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${DDP_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VENDOR "slurm-ddp")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "PyTorch DDP launch for Slurm")
# The install prefix the paths in ddp.conf and the .pc file were configured for.
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_OUTPUT_FILE_PREFIX "${PROJECT_BINARY_DIR}/packages")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_RELOCATABLE OFF)  # ddp.conf names the installed paths
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)  # one package per component
# The components of the second run, where the runtime was built.
set(DDP_RUNTIME_COMPONENTS "")
if(TARGET ddp)
  list(APPEND DDP_RUNTIME_COMPONENTS runtime dev)
endif()
if(TARGET ddp-cifar100)
  list(APPEND DDP_RUNTIME_COMPONENTS trainer)
endif()
if(TARGET ddp-preflight)
  list(APPEND DDP_RUNTIME_COMPONENTS preflight)
endif()
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/cpack-project.cmake)

# ------------------------------------------------------------------------- the Slurm series --

ddp_version_series("${Slurm_VERSION}" DDP_SLURM_SERIES _slurm_next)
if(DDP_SLURM_SERIES)
  set(_plugin_deb_depends
      "slurm-wlm-basic-plugins (>= ${DDP_SLURM_SERIES}), slurm-wlm-basic-plugins (<< ${_slurm_next})")
  set(_plugin_rpm_requires "slurm >= ${DDP_SLURM_SERIES}, slurm < ${_slurm_next}")
  set(DDP_PLUGIN_DEB_RELEASE "${DDP_PACKAGE_RELEASE}+slurm${DDP_SLURM_SERIES}")
  set(DDP_PLUGIN_RPM_RELEASE "${DDP_PACKAGE_RELEASE}.slurm${DDP_SLURM_SERIES}")
else()
  message(FATAL_ERROR "The Slurm version was not found in ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h "
                      "(Slurm_VERSION='${Slurm_VERSION}'): the plugin package must name the Slurm "
                      "series it is built for. Point SLURM_INCLUDE_DIR at Slurm's headers.")
endif()

# ------------------------------------------------------------------------- the LibTorch used --

# The Debian package that holds the LibTorch CMake package libddp was built against (libtorch-dev,
# libtorch-cuda-dev), for libddp-dev's dependency. None for a pip wheel, the libtorch zip or a
# container's LibTorch: no package can be depended on then.
set(_torch_dev_depends "")
find_program(DPKG_QUERY_EXECUTABLE dpkg-query)
mark_as_advanced(DPKG_QUERY_EXECUTABLE)
ddp_version_series("${Torch_VERSION}" _torch_this _torch_next)
if(TARGET ddp AND DPKG_QUERY_EXECUTABLE AND _torch_this)
  file(REAL_PATH "${Torch_DIR}/TorchConfig.cmake" _torch_config)
  execute_process(COMMAND ${DPKG_QUERY_EXECUTABLE} -S "${_torch_config}"
                  OUTPUT_VARIABLE _owner ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_owner MATCHES "^([^:, ]+)(:[a-z0-9]+)?: ")
    set(_pkg "${CMAKE_MATCH_1}")
    set(_torch_dev_depends "${_pkg} (>= ${_torch_this}), ${_pkg} (<< ${_torch_next})")
  else()
    message(STATUS "LibTorch ${Torch_VERSION} (${Torch_DIR}) belongs to no Debian package: "
                   "the libddp packages cannot depend on it; install that LibTorch on the nodes")
  endif()
endif()

# ------------------------------------------------------------------------------ per package --

# A package of each of today's components replaces the one slurm-ddp package of 0.1.0-1.
set(_old_deb "slurm-ddp (<< 0.1.0-2)")
set(_old_rpm "slurm-ddp < 0.1.0-2")

set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME slurm-spank-ddp)
set(CPACK_RPM_PLUGIN_PACKAGE_NAME slurm-spank-ddp)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PLUGIN_DESCRIPTION "PyTorch DDP launch for Slurm ${DDP_SLURM_SERIES} (SPANK plugin)
spank_ddp adds --ddp-nodes, --ddp-gpus and the other --ddp-* options to srun, sbatch and
salloc, and gives every task of a step the environment torchrun's agent would (RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID...), with each rank placed
next to its GPU's NIC and cores. A failure watch on every node ends the step when a rank fails,
freezes or loses its node, and names the first failure once. This package ships the plugin with
its plugstack.conf.d snippet, a cli_filter that turns --ddp-nodes/--ddp-gpus into a resource
request, cluster profiles, ddp-plan, the failure watch, the --ddp-monitor sampler,
ddp-report and the bash completion of the --ddp-* options.
Built for Slurm ${DDP_SLURM_SERIES} only: Slurm loads a SPANK plugin only if it was built for its
own major.minor series.")
set(CPACK_RPM_PLUGIN_PACKAGE_SUMMARY "PyTorch DDP launch for Slurm ${DDP_SLURM_SERIES} (SPANK plugin)")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_DEPENDS "${_plugin_deb_depends}")
set(CPACK_RPM_PLUGIN_PACKAGE_REQUIRES "${_plugin_rpm_requires}")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_RECOMMENDS "slurm-client")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_SUGGESTS "libddp-dev, ddp-cifar100")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libddp${PROJECT_VERSION_MAJOR})  # after its SONAME
set(CPACK_RPM_RUNTIME_PACKAGE_NAME libddp)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "PyTorch DDP runtime for LibTorch programs (libddp)
libddp reads the DDP contract that spank_ddp, torchrun or plain srun give a process (rank,
world size, rendezvous), opens the process group (NCCL or Gloo) and brings a distributed
sampler, overlapped gradient all-reduce and rank-aware logging. It needs no Slurm: a
torchrun-started program loads it anywhere. Built against LibTorch ${Torch_VERSION}.")
set(CPACK_RPM_RUNTIME_PACKAGE_SUMMARY "PyTorch DDP runtime for LibTorch programs (libddp)")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libddp-dev)
set(CPACK_RPM_DEV_PACKAGE_NAME libddp-devel)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_torch_dev_depends}")
set(CPACK_RPM_DEV_PACKAGE_REQUIRES "libddp = %{version}-%{release}")
set(CPACK_DEBIAN_DEV_DESCRIPTION "PyTorch DDP runtime for LibTorch programs (development files)
Headers of libddp, its CMake package (find_package(slurm-ddp), target slurm-ddp::ddp) and
pkg-config file (slurm-ddp). Built against LibTorch ${Torch_VERSION}: programs built on it
must use that LibTorch too.")
set(CPACK_RPM_DEV_PACKAGE_SUMMARY "PyTorch DDP runtime for LibTorch programs (development files)")

set(CPACK_DEBIAN_TRAINER_PACKAGE_NAME ddp-cifar100)
set(CPACK_RPM_TRAINER_PACKAGE_NAME ddp-cifar100)
set(CPACK_DEBIAN_TRAINER_PACKAGE_SECTION science)
set(CPACK_COMPONENT_TRAINER_DEPENDS runtime)
set(CPACK_RPM_TRAINER_PACKAGE_REQUIRES "libddp = %{version}-%{release}")
set(CPACK_DEBIAN_TRAINER_PACKAGE_SUGGESTS "slurm-spank-ddp")
set(CPACK_DEBIAN_TRAINER_DESCRIPTION "Reference CIFAR-100 WideResNet trainer on libddp
ddp-cifar100 trains the reference CIFAR-100 recipe with data-parallel LibTorch, one process
per GPU (NCCL) or per CPU rank (Gloo), started by srun --ddp, torchrun or plain srun.
cifar-synth writes synthetic data in the CIFAR-100 format.")
set(CPACK_RPM_TRAINER_PACKAGE_SUMMARY "Reference CIFAR-100 WideResNet trainer on libddp")

# Apart from the plugin package: it runs on libddp, hence LibTorch, which the plugin never needs.
set(CPACK_DEBIAN_PREFLIGHT_PACKAGE_NAME ddp-preflight)
set(CPACK_RPM_PREFLIGHT_PACKAGE_NAME ddp-preflight)
set(CPACK_DEBIAN_PREFLIGHT_PACKAGE_SECTION admin)
set(CPACK_COMPONENT_PREFLIGHT_DEPENDS runtime)
set(CPACK_RPM_PREFLIGHT_PACKAGE_REQUIRES "libddp = %{version}-%{release}")
set(CPACK_DEBIAN_PREFLIGHT_PACKAGE_SUGGESTS "slurm-spank-ddp")
set(CPACK_DEBIAN_PREFLIGHT_DESCRIPTION "Checks a DDP step's nodes and links before training (ddp-preflight)
ddp-preflight runs on every rank of a step (srun --ddp-preflight starts it before the program):
the launch contract, the rendezvous, each rank's GPU and network interfaces, then all-reduce
bandwidth and latency over all ranks and node pairs, naming the slowest node or link.")
set(CPACK_RPM_PREFLIGHT_PACKAGE_SUMMARY "Checks a DDP step's nodes and links before training")

foreach(c PLUGIN RUNTIME DEV TRAINER PREFLIGHT)
  set(CPACK_DEBIAN_${c}_PACKAGE_BREAKS "${_old_deb}")
  set(CPACK_DEBIAN_${c}_PACKAGE_REPLACES "${_old_deb}")
  set(CPACK_RPM_${c}_PACKAGE_OBSOLETES "${_old_rpm}")
  string(REGEX REPLACE "^[^\n]*\n" "" CPACK_RPM_${c}_PACKAGE_DESCRIPTION "${CPACK_DEBIAN_${c}_DESCRIPTION}")
endforeach()

# ------------------------------------------------------------------------------------ Debian --

# Library dependencies from dpkg-shlibdeps: libslurm, hwloc and yaml-cpp for the plugin package;
# the LibTorch libraries (libtorch1.13, libtorch2.6 ...) for libddp0 and the trainer. Slurm's own
# package is named by hand, because spank_ddp.so takes libslurmfull's symbols from
# srun/slurmstepd (no NEEDED entry).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The trainer needs libddp.so.0 of this build, which no installed package holds yet: found here,
# its package comes from the component dependency (libddp0 of the same version).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # libddp0's shlibs file (not for the plugin's run)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${DDP_PACKAGE_RELEASE})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Every file the plugin package installs under /etc is a conffile: an admin's edits survive
# upgrades and dpkg -r; dpkg --purge removes them.
string(REPLACE ";" "\n" _conffiles_text "${_ddp_conffiles}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb/conffiles "${_conffiles_text}\n")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/deb/conffiles)

# --------------------------------------------------------------------------------------- RPM --

# Library requirements come from rpmbuild's automatic dependencies.
set(CPACK_RPM_PACKAGE_LICENSE "${DDP_PACKAGE_LICENSE}")
set(CPACK_RPM_PACKAGE_GROUP "System Environment/Base")
set(CPACK_RPM_PACKAGE_RELEASE ${DDP_PACKAGE_RELEASE})
set(CPACK_RPM_PACKAGE_RELEASE_DIST ON)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(_rpm_config "")
foreach(f IN LISTS _ddp_conffiles)
  list(APPEND _rpm_config "%config(noreplace) ${f}")
endforeach()
# CPack RPM marks every file installed to an absolute path %config; the plugin is none.
list(APPEND _rpm_config "%attr(0755,root,root) ${DDP_FULL_PLUGIN_DIR}/spank_ddp.so")
set(CPACK_RPM_PLUGIN_USER_FILELIST ${_rpm_config})
# Directories that belong to Slurm or the system, not to these packages.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    "${DDP_FULL_SYSCONF_DIR}" "${DDP_FULL_SYSCONF_DIR}/plugstack.conf.d" "${DDP_FULL_PLUGIN_DIR}"
    "${DDP_BASH_COMPLETION_DIR}"
    "${CMAKE_INSTALL_FULL_LIBDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}/cmake"
    "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_FULL_INCLUDEDIR}"
    "${CMAKE_INSTALL_FULL_MANDIR}" "${CMAKE_INSTALL_FULL_MANDIR}/man1"
    "${CMAKE_INSTALL_FULL_MANDIR}/man8")

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cpack-project.cmake.in
               ${CMAKE_CURRENT_BINARY_DIR}/cpack-project.cmake @ONLY)
include(CPack)

# ------------------------------------------------------------------ cmake --target packages --

# One run for the plugin, one for the runtime, its -dev, the trainer and the preflight; .rpm too where rpmbuild is.
find_program(RPMBUILD_EXECUTABLE rpmbuild)
mark_as_advanced(RPMBUILD_EXECUTABLE)
set(_generators DEB)
if(RPMBUILD_EXECUTABLE)
  list(APPEND _generators RPM)
endif()
set(_groups plugin)
if(DDP_RUNTIME_COMPONENTS)
  list(APPEND _groups runtime)
endif()
set(_runs "")
foreach(g IN LISTS _generators)
  foreach(group IN LISTS _groups)
    list(APPEND _runs COMMAND ${CMAKE_CPACK_COMMAND} -G ${g} -D DDP_PACKAGES=${group})
  endforeach()
endforeach()
add_custom_target(packages
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${CPACK_OUTPUT_FILE_PREFIX}
  ${_runs}
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
  COMMENT "Packaging (${_generators}): the plugin for Slurm ${DDP_SLURM_SERIES}; ${DDP_RUNTIME_COMPONENTS}"
  VERBATIM)
