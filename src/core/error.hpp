#pragma once
// Typed errors shared by every stage. Parsing and validation never exit: they throw InputError,
// and only the CLI turns it into exit code 2.
#include <stdexcept>
#include <string>

namespace sextant {

// Bad user input: a JSON path (RFC 6901 pointer, "" for the document), the offending value as
// text, and the rule it breaks. what() renders all three on one line.
class InputError : public std::runtime_error {
public:
    InputError(std::string path, std::string value, std::string rule);
    const std::string& path() const { return path_; }
    const std::string& value() const { return value_; }
    const std::string& rule() const { return rule_; }

private:
    std::string path_;
    std::string value_;
    std::string rule_;
};

// An invariant of Sextant itself was broken: a bug, exit code 1.
class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

}  // namespace sextant
