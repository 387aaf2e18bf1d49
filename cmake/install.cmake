# SPDX-License-Identifier: BSD-3-Clause
# Install rules: public headers, the three libraries, the replay tool and a CMake package config
# (ca_runtimeConfig.cmake + version file), so that a trainer can find_package(ca_runtime).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ca_runtime)
set_target_properties(ca_ir PROPERTIES EXPORT_NAME ir)
set_target_properties(ca_serializer PROPERTIES EXPORT_NAME serializer)
set_target_properties(ca_runtime PROPERTIES EXPORT_NAME runtime)

install(TARGETS ca_ir ca_serializer ca_runtime EXPORT ca_runtimeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir ir serializer runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/ca
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/ir/include/ca/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ca)

install(EXPORT ca_runtimeTargets NAMESPACE ca:: DESTINATION ${CA_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ca_runtimeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ca_runtimeConfig.cmake
                              INSTALL_DESTINATION ${CA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ca_runtimeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ca_runtimeConfig.cmake
              ${PROJECT_BINARY_DIR}/ca_runtimeConfigVersion.cmake
        DESTINATION ${CA_CMAKE_DIR})
