// A small JSON reader for the test fixtures (core-config.json, expected*.json, safetensors headers):
// objects, arrays, strings (escapes \" \\ \/ \b \f \n \r \t; \u only below 0x80, enough for the
// fixtures), numbers as double (strtod: correctly rounded, so the doubles JS wrote come back exact),
// true, false, null. Errors throw std::runtime_error, which Catch2 reports with the message.
// Header-only and dependency-free, so the same code runs natively and in the wasm test binary.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace testjson {

struct Value {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  bool has(const std::string& key) const { return kind == Kind::kObject && object.count(key) != 0; }
  const Value& operator[](const std::string& key) const {
    if (kind != Kind::kObject) throw std::runtime_error("json: not an object (looking for \"" + key + "\")");
    const auto it = object.find(key);
    if (it == object.end()) throw std::runtime_error("json: no key \"" + key + "\"");
    return it->second;
  }
  const Value& operator[](std::size_t i) const { return items().at(i); }
  const std::vector<Value>& items() const {
    if (kind != Kind::kArray) throw std::runtime_error("json: not an array");
    return array;
  }
  double num() const {
    if (kind != Kind::kNumber) throw std::runtime_error("json: not a number");
    return number;
  }
  int integer() const {
    const double v = num();
    if (v != static_cast<double>(static_cast<int>(v))) throw std::runtime_error("json: not an int");
    return static_cast<int>(v);
  }
  bool flag() const {
    if (kind != Kind::kBool) throw std::runtime_error("json: not a boolean");
    return boolean;
  }
  const std::string& str() const {
    if (kind != Kind::kString) throw std::runtime_error("json: not a string");
    return string;
  }
  template <class T>
  std::vector<T> numbers() const {  // an array of numbers
    std::vector<T> out;
    out.reserve(items().size());
    for (const Value& v : array) out.push_back(static_cast<T>(v.num()));
    return out;
  }
};

namespace detail {

class Parser {
 public:
  Parser(const char* begin, const char* end) : p_(begin), end_(end) {}
  Value document() {
    Value v = value();
    skip_space();
    if (p_ != end_) fail("text after the value");
    return v;
  }

 private:
  const char* p_;
  const char* end_;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("json: " + what + " at \"" +
                             std::string(p_, std::min<std::size_t>(20, end_ - p_)) + "\"");
  }
  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool take(char c) {
    skip_space();
    if (p_ != end_ && *p_ == c) return ++p_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(const char* word) {
    const std::size_t n = std::char_traits<char>::length(word);
    if (static_cast<std::size_t>(end_ - p_) < n || std::string(p_, n) != word) return false;
    p_ += n;
    return true;
  }
  Value value() {
    skip_space();
    if (p_ == end_) fail("unexpected end");
    Value v;
    if (*p_ == '{') return object();
    if (*p_ == '[') return array();
    if (*p_ == '"') {
      v.kind = Value::Kind::kString;
      v.string = string();
    } else if (literal("true")) {
      v.kind = Value::Kind::kBool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Value::Kind::kBool;
    } else if (literal("null")) {
      v.kind = Value::Kind::kNull;
    } else {
      v.kind = Value::Kind::kNumber;
      v.number = number();
    }
    return v;
  }
  Value object() {
    Value v;
    v.kind = Value::Kind::kObject;
    expect('{');
    if (take('}')) return v;
    do {
      skip_space();
      if (p_ == end_ || *p_ != '"') fail("expected a key");
      std::string key = string();
      expect(':');
      v.object[key] = value();
    } while (take(','));
    expect('}');
    return v;
  }
  Value array() {
    Value v;
    v.kind = Value::Kind::kArray;
    expect('[');
    if (take(']')) return v;
    do v.array.push_back(value());
    while (take(','));
    expect(']');
    return v;
  }
  std::string string() {
    ++p_;  // the opening quote
    std::string out;
    while (p_ != end_ && *p_ != '"') {
      char c = *p_++;
      if (c == '\\') {
        if (p_ == end_) fail("unfinished escape");
        c = *p_++;
        static const std::string kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
        const std::size_t at = kFrom.find(c);
        if (at != std::string::npos) {
          c = kTo[at];
        } else if (c == 'u' && end_ - p_ >= 4) {
          const long code = std::strtol(std::string(p_, 4).c_str(), nullptr, 16);
          if (code >= 0x80) fail("\\u escape above 0x7f");
          c = static_cast<char>(code), p_ += 4;
        } else {
          fail("bad escape");
        }
      }
      out += c;
    }
    if (p_ == end_) fail("unterminated string");
    ++p_;
    return out;
  }
  double number() {
    const std::string text(p_, std::min<std::size_t>(64, end_ - p_));
    char* stop = nullptr;
    const double v = std::strtod(text.c_str(), &stop);
    if (stop == text.c_str()) fail("expected a value");
    p_ += stop - text.c_str();
    return v;
  }
};

}  // namespace detail

inline Value parse(const std::string& text) {
  return detail::Parser(text.data(), text.data() + text.size()).document();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Value parse_file(const std::string& path) {
  try {
    return parse(read_text(path));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace testjson
