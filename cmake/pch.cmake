# SPDX-License-Identifier: BSD-3-Clause
# Precompiled libtorch headers. Most of a build's time is g++ reading libtorch's headers again for
# each translation unit, but a PCH is not free either: g++ instantiates, in every TU that uses
# it, each template still pending in the whole header set, used or not. So there are two, and
# each target gets the smallest that covers what its sources include:
#   torch: cmake/pch/ca_pch_torch.h (the C++ frontend, torch/torch.h) for targets with a source
#          that reaches torch/torch.h or torch/script.h;
#   aten:  cmake/pch/ca_pch_aten.h (ATen, autograd internals, compiled autograd) for the others;
# and a source that reaches no torch header at all (c10's value types only) compiles without.
# "Reaches" follows the project's own headers (quoted includes, and <ca/...>) to any depth.
# CA_PCH=OFF builds without (each source must still include what it uses: that build checks it).
option(CA_PCH "Precompile libtorch's headers once per build folder" ON)

set(CA_PCH_DIR ${CMAKE_CURRENT_LIST_DIR}/pch)
if(CA_PCH)
  foreach(kind aten torch)
    add_library(ca_pch_${kind} OBJECT ${CA_PCH_DIR}/empty.cpp)
    target_link_libraries(ca_pch_${kind} PRIVATE ${TORCH_LIBRARIES} ca_options)
    target_precompile_headers(ca_pch_${kind} PRIVATE ${CA_PCH_DIR}/ca_pch_${kind}.h)
  endforeach()
  # A PCH that g++ finds but cannot use (flags other than its own) is otherwise skipped silently.
  target_compile_options(ca_options INTERFACE -Winvalid-pch)
endif()

# Where the project's own headers are found (besides the including file's folder).
set(CA_PCH_INCLUDE_DIRS ir/include serializer/include serializer/src runtime/include runtime/src
                        tests bench)

# How much of torch `file` reaches: 2 the C++ frontend, 1 ATen or torch internals, 0 neither
# (c10's value types and torch/version.h are light enough to parse each time).
function(ca_torch_reach file out)
  get_property(known GLOBAL PROPERTY CA_REACH_${file} SET)
  if(known)
    get_property(level GLOBAL PROPERTY CA_REACH_${file})
    set(${out} ${level} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY CA_REACH_${file} 0)  # a cycle ends here
  file(STRINGS ${file} includes REGEX "^#include [<\"]")
  set(level 0)
  get_filename_component(here ${file} DIRECTORY)
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include [<\"]([^>\"]+)[>\"].*" "\\1" name "${line}")
    if(name MATCHES "^torch/(torch|script)\\.h$")
      set(level 2)
      break()
    elseif(name MATCHES "^(ATen/|torch/csrc/|torch/cuda\\.h)")
      set(level 1)
    elseif(line MATCHES "^#include \"" OR name MATCHES "^ca/")
      foreach(dir ${here} ${CA_PCH_INCLUDE_DIRS})
        if(NOT IS_ABSOLUTE ${dir})
          set(dir ${PROJECT_SOURCE_DIR}/${dir})
        endif()
        if(EXISTS ${dir}/${name} AND NOT IS_DIRECTORY ${dir}/${name})
          ca_torch_reach(${dir}/${name} sub)
          if(sub GREATER level)
            set(level ${sub})
          endif()
          break()
        endif()
      endforeach()
      if(level EQUAL 2)
        break()
      endif()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY CA_REACH_${file} ${level})
  set(${out} ${level} PARENT_SCOPE)
endfunction()

# Gives one target its PCH (see the top of this file).
function(ca_target_pch t)
  get_target_property(sources ${t} SOURCES)
  get_target_property(source_dir ${t} SOURCE_DIR)
  set(need 0)
  set(bare)
  foreach(src IN LISTS sources)
    if(NOT src MATCHES "\\.(cpp|cc)$")
      continue()
    endif()
    if(NOT IS_ABSOLUTE ${src})
      set(src ${source_dir}/${src})
    endif()
    if(EXISTS ${src})
      ca_torch_reach(${src} level)
    else()
      set(level 1)  # generated at build time: node tables, op rules (torch internals)
    endif()
    if(level EQUAL 0)
      list(APPEND bare ${src})
    elseif(level GREATER need)
      set(need ${level})
    endif()
  endforeach()
  if(need EQUAL 0)
    return()
  endif()
  set(kind aten)
  if(need EQUAL 2)
    set(kind torch)
  endif()
  target_precompile_headers(${t} REUSE_FROM ca_pch_${kind})
  if(bare)
    set_source_files_properties(${bare} TARGET_DIRECTORY ${t} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  get_target_property(type ${t} TYPE)
  if(type STREQUAL EXECUTABLE)
    # g++ refuses a PCH built with another -fpic/-fpie setting, and the PCH is PIC; PIC code links
    # into a PIE executable as well, so executables compile as PIC too (the last flag wins).
    target_compile_options(${t} PRIVATE -fPIC)
  endif()
endfunction()

# Every C++ target in `dir` and below gets its PCH (or none, where its sources reach no torch).
function(ca_use_pch dir)
  if(NOT CA_PCH)
    return()
  endif()
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT t MATCHES "^ca_pch_" AND type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
      ca_target_pch(${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    ca_use_pch(${sub})
  endforeach()
endfunction()
