#include "sim/redis/lua_values.h"

#include <cstdio>

#include "env/assert.h"
#include "sim/redis/command_util.h"

namespace locksim::sim::redis::lua {

std::string map_newlines(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

std::string trim_newlines(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && (s[begin] == '\r' || s[begin] == '\n')) ++begin;
  while (end > begin && (s[end - 1] == '\r' || s[end - 1] == '\n')) --end;
  return s.substr(begin, end - begin);
}

std::string lua_error_text(const std::string& err_buffer) {
  std::string code = "ERR";
  std::string msg;
  if (!err_buffer.empty() && err_buffer[0] == '-') {
    const size_t space = err_buffer.find(' ');
    if (space == std::string::npos) {
      msg = err_buffer.substr(1);
    } else {
      code = err_buffer.substr(1, space - 1);
      msg = err_buffer.substr(space + 1);
    }
  } else {
    msg = err_buffer;
  }
  return code + " " + trim_newlines(msg);
}

void push_error_table(lua_State* L, const std::string& text) {
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
}

void push_lua_error(lua_State* L, const std::string& raw) {
  push_error_table(L, lua_error_text(raw));
}

int64_t lua_number_to_integer(lua_Number d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

std::string number_argument(lua_Number d) {
  return format_g17(static_cast<double>(d));
}

bool plain_integer_number(std::string_view text, lua_Number& out) {
  constexpr size_t kDigitsMax = 15;  // 10^15 - 1 < 2^53: every value exact
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > kDigitsMax) return false;
  int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  const lua_Number magnitude = static_cast<lua_Number>(value);
  out = negative ? -magnitude : magnitude;  // "-0" is -0.0, as strtod reads it
  return true;
}

std::string to_std_string(lua_State* L, int index) {
  size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  return s ? std::string(s, len) : std::string();
}

std::string display_string(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      return to_std_string(L, index);
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) ? "true" : "false";
    case LUA_TNIL:
      return "nil";
    default: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%s: %p", luaL_typename(L, index), lua_topointer(L, index));
      return buf;
    }
  }
}

namespace {

// to_reply for a table: {err=...} is an error, {ok=...} a status, anything
// else an array of its elements 1..n up to the first nil.
Reply table_to_reply(lua_State* L, int depth) {
  lua_pushstring(L, "err");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TSTRING) {
    // addReplyErrorFormat("-%s", msg): trimmed, newlines mapped, and the
    // leading '-' means the text is sent as is, without an ERR code.
    std::string s = map_newlines(trim_newlines("-" + to_std_string(L, -1)));
    lua_pop(L, 1);
    LOCKSIM_ASSERT(!s.empty() && s[0] == '-');
    return Reply::error(s.substr(1));
  }
  lua_pop(L, 1);
  lua_pushstring(L, "ok");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::string s = map_newlines(to_std_string(L, -1));
    lua_pop(L, 1);
    return Reply::status(std::move(s));
  }
  lua_pop(L, 1);
  std::vector<Reply> elements;
  for (int64_t j = 1; j <= kReplyElementsMax; ++j) {
    lua_rawgeti(L, -1, static_cast<int>(j));
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    elements.push_back(to_reply(L, depth + 1));
    lua_pop(L, 1);
  }
  return Reply::array(std::move(elements));
}

}  // namespace

Reply to_reply(lua_State* L, int depth) {
  if (depth > kReplyDepthMax || !lua_checkstack(L, 4)) {
    return Reply::error("ERR reached lua stack limit");
  }
  const int top = lua_gettop(L);
  Reply reply;
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      reply = Reply::bulk(to_std_string(L, -1));
      break;
    case LUA_TBOOLEAN:
      reply = lua_toboolean(L, -1) ? Reply::integer_reply(1) : Reply::nil();
      break;
    case LUA_TNUMBER:
      reply = Reply::integer_reply(lua_number_to_integer(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE:
      reply = table_to_reply(L, depth);
      break;
    default:
      reply = Reply::nil();
      break;
  }
  LOCKSIM_ASSERT_MSG(lua_gettop(L) == top, "to_reply leaves the value where it found it");
  return reply;
}

void push_reply(lua_State* L, const Reply& reply, int depth) {
  luaL_checkstack(L, 4, "reply nested too deeply");
  const int top = lua_gettop(L);
  switch (reply.kind) {
    case Reply::Kind::kStatus:
      lua_newtable(L);
      lua_pushlstring(L, reply.text.data(), reply.text.size());
      lua_setfield(L, -2, "ok");
      break;
    case Reply::Kind::kError:
    case Reply::Kind::kIoError:
      push_lua_error(L, "-" + reply.text);
      break;
    case Reply::Kind::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(reply.integer));
      break;
    case Reply::Kind::kBulk:
      lua_pushlstring(L, reply.text.data(), reply.text.size());
      break;
    case Reply::Kind::kNil:
      lua_pushboolean(L, 0);
      break;
    case Reply::Kind::kArray:
      lua_createtable(L, static_cast<int>(reply.elements.size()), 0);
      for (size_t i = 0; i < reply.elements.size(); ++i) {
        push_reply(L, reply.elements[i], depth + 1);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      break;
  }
  LOCKSIM_ASSERT_MSG(lua_gettop(L) == top + 1, "push_reply pushes exactly one value");
}

Reply error_reply_from_table(lua_State* L, const std::string& sha) {
  LOCKSIM_ASSERT(lua_istable(L, -1));
  // Raw reads, as table_to_reply's: this runs outside any pcall, and a
  // table whose metatable raises on a missing field (error(_G): the
  // sandbox's global guard) would otherwise panic the interpreter.
  const auto raw_field = [L](const char* name) {
    lua_pushstring(L, name);
    lua_rawget(L, -2);
  };
  raw_field("err");
  // error({}) crashes redis-server 7.0.15 (NULL message); we answer instead.
  std::string msg =
      lua_isstring(L, -1) ? to_std_string(L, -1) : "ERR script raised an error without a message";
  lua_pop(L, 1);
  raw_field("source");
  const bool has_source = lua_isstring(L, -1) != 0;
  const std::string source = to_std_string(L, -1);
  lua_pop(L, 1);
  raw_field("line");
  const bool has_line = lua_isstring(L, -1) != 0;
  const std::string line = to_std_string(L, -1);
  lua_pop(L, 1);
  if (has_source && has_line) msg += " script: " + sha + ", on " + source + ":" + line + ".";
  return Reply::error(map_newlines(msg));
}

void push_string_array(lua_State* L, std::span<const std::string> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

}  // namespace locksim::sim::redis::lua
