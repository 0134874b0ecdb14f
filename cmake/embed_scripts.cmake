# Writes a C++ file holding every examples/scripts/*.json, so a shipped
# scenario that names `script:examples/scripts/NAME.json` runs wherever the
# locksim binary is run from (harness/script_file.h).
# Inputs: OUT (path of the .cpp to write), DIR (the source tree).
file(GLOB files "${DIR}/examples/scripts/*.json")
list(SORT files)
set(body "// Generated from examples/scripts/*.json by cmake/embed_scripts.cmake. Do not edit.\n")
string(APPEND body "#include \"harness/script_file.h\"\n\nnamespace locksim::harness {\n\n")
string(APPEND body "const std::vector<BuiltinScript>& builtin_script_texts() {\n")
string(APPEND body "  static const std::vector<BuiltinScript> all = {\n")
foreach(f ${files})
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" text)
  string(APPEND body "      {\"examples/scripts/${name}\", R\"locksim_json(${text})locksim_json\"},\n")
endforeach()
string(APPEND body "  };\n  return all;\n}\n\n}  // namespace locksim::harness\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
