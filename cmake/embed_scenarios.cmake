# Writes a C++ file holding every scenarios/*.json, so the locksim binary
# knows the shipped scenarios wherever it is run from.
# Inputs: OUT (path of the .cpp to write), DIR (the scenarios folder).
file(GLOB files "${DIR}/*.json")
list(SORT files)
set(body "// Generated from scenarios/*.json by cmake/embed_scenarios.cmake. Do not edit.\n")
string(APPEND body "#include \"harness/scenario.h\"\n\nnamespace locksim::harness {\n\n")
string(APPEND body "const std::vector<BuiltinScenario>& builtin_scenario_texts() {\n")
string(APPEND body "  static const std::vector<BuiltinScenario> all = {\n")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "      {\"${name}\", R\"locksim_json(${text})locksim_json\"},\n")
endforeach()
string(APPEND body "  };\n  return all;\n}\n\n}  // namespace locksim::harness\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
