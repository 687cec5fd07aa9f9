#include "report/output.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/table.hpp"

namespace sextant {

Value Value::structured(nlohmann::json j, std::string text) {
    Value v;
    v.json = std::move(j);
    v.text_override = std::move(text);
    return v;
}

std::string cell_text(const Value& v) {
    if (!v.text_override.empty() || !v.json.is_primitive()) return v.text_override;
    if (v.json.is_null()) return "-";
    if (v.json.is_string()) return v.json.get<std::string>();
    if (v.json.is_boolean()) return v.json.get<bool>() ? "yes" : "no";
    if (v.json.is_number_integer() && v.style == Style::Plain) return v.json.dump();
    const double x = v.json.get<double>();
    switch (v.style) {
    case Style::Plain: return fmt::format("{:.{}f}", x, v.decimals);
    case Style::Duration: return format_seconds(x);
    case Style::FixedDuration: return fmt::format("{:.{}f} s", x, v.decimals);
    case Style::ByteSize: return format_bytes(x);
    case Style::Fraction: return fmt::format("{:.{}f}%", 100 * x, v.decimals);
    case Style::Percent: return fmt::format("{:.{}f}%", x, v.decimals);
    case Style::SignedPercent: return fmt::format("{:+.{}f}%", x, v.decimals);
    case Style::Signed: return fmt::format("{:+.{}f}", x, v.decimals);
    case Style::Hours: return fmt::format("{:.{}f}", x / 3600.0, v.decimals);
    case Style::Days: return fmt::format("{:.{}f}", x / 86400.0, v.decimals);
    }
    return v.json.dump();
}

Table& Output::table(std::string pointer, std::vector<Column> columns) {
    blocks.emplace_back(Table{.pointer = std::move(pointer), .columns = std::move(columns), .rows = {}});
    return std::get<Table>(blocks.back());
}

namespace {
std::string facts_text(const std::vector<Fact>& facts) {
    std::size_t width = 0;
    for (const auto& f : facts) width = std::max(width, f.label.size());
    std::string out;
    for (const auto& f : facts) {
        if (f.label.empty()) continue;
        out += fmt::format("{:<{}} {}", f.label, width, cell_text(f.value));
        out += f.detail.empty() ? "\n" : " " + f.detail + "\n";
    }
    return out;
}

// The text-visible cells of a row.
std::vector<std::string> text_cells(const Table& t, const std::vector<Value>& row) {
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < t.columns.size(); ++c)
        if (!t.columns[c].header.empty()) cells.push_back(c < row.size() ? cell_text(row[c]) : "-");
    return cells;
}

std::string table_text(const Table& t) {
    if (t.hidden_in_text || std::all_of(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.header.empty(); }))
        return "";
    std::vector<std::string> header;
    int merge = -1;  // the merge column's index among the text-visible columns
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        if (t.columns[c].header.empty()) continue;
        if (static_cast<int>(c) == t.merge_runs_on) merge = static_cast<int>(header.size());
        header.push_back(t.columns[c].header);
    }
    TextTable text(header);
    auto without = [&](std::vector<std::string> cells) {
        if (merge >= 0) cells.erase(cells.begin() + merge);
        return cells;
    };
    std::vector<const std::vector<Value>*> rows;
    for (std::size_t r = 0; r < t.rows.size(); ++r)
        if (std::find(t.json_only_rows.begin(), t.json_only_rows.end(), r) == t.json_only_rows.end()) rows.push_back(&t.rows[r]);
    std::size_t i = 0;
    while (i < rows.size()) {
        std::vector<std::string> cells = text_cells(t, *rows[i]);
        std::size_t j = i;
        while (merge >= 0 && j + 1 < rows.size() && without(text_cells(t, *rows[j + 1])) == without(cells)) ++j;
        if (j > i) cells[merge] += "-" + text_cells(t, *rows[j])[merge];
        text.add_row(std::move(cells));
        i = j + 1;
    }
    return (t.title.empty() ? "" : t.title + "\n") + text.render();
}

std::string csv_cell(const nlohmann::json& v) {
    if (v.is_null()) return "";
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string quoted = "\"";
    for (char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return quoted + "\"";
}
}  // namespace

nlohmann::json row_json(const Table& t, const std::vector<Value>& row) {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t c = 0; c < t.columns.size() && c < row.size(); ++c)
        if (!t.columns[c].key.empty() && !row[c].json.is_null()) out[t.columns[c].key] = row[c].json;
    return out;
}

std::string render_text(const Output& out) {
    std::string text = out.heading.empty() ? "" : out.heading + "\n";
    for (const auto& block : out.blocks) {
        std::string part;
        if (const auto* facts = std::get_if<std::vector<Fact>>(&block)) part = facts_text(*facts);
        else if (const auto* table = std::get_if<Table>(&block)) part = table_text(*table);
        else part = std::get<Note>(block).text + "\n";
        if (part.empty()) continue;  // a JSON-only block
        const auto* note = std::get_if<Note>(&block);
        text += (text.empty() || (note && note->attached) ? "" : "\n") + part;
    }
    return text;
}

nlohmann::json render_json(const Output& out) {
    nlohmann::json doc = nlohmann::json::object();
    for (const auto& block : out.blocks) {
        if (const auto* facts = std::get_if<std::vector<Fact>>(&block)) {
            for (const auto& f : *facts)
                if (!f.pointer.empty() && !f.value.json.is_null()) doc[nlohmann::json::json_pointer(f.pointer)] = f.value.json;
        } else if (const auto* table = std::get_if<Table>(&block); table && !table->pointer.empty()) {
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& row : table->rows) rows.push_back(row_json(*table, row));
            doc[nlohmann::json::json_pointer(table->pointer)] = std::move(rows);
        }
    }
    return doc;
}

std::string render_csv(const Table& table, const std::vector<std::string>& keys) {
    std::vector<std::size_t> picked;
    auto index_of = [&](const std::string& key) {
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            if (table.columns[c].key == key) return c;
        throw std::logic_error("render_csv: no column " + key);
    };
    if (!keys.empty())
        for (const auto& k : keys) picked.push_back(index_of(k));
    else
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            if (!table.columns[c].key.empty() && (table.rows.empty() || c >= table.rows[0].size() || table.rows[0][c].json.is_primitive()))
                picked.push_back(c);
    std::string out;
    for (std::size_t i = 0; i < picked.size(); ++i) out += (i ? "," : "") + csv_cell(table.columns[picked[i]].key);
    out += "\n";
    for (const auto& row : table.rows) {
        for (std::size_t i = 0; i < picked.size(); ++i)
            out += (i ? "," : "") + csv_cell(picked[i] < row.size() ? row[picked[i]].json : nlohmann::json());
        out += "\n";
    }
    return out;
}

}  // namespace sextant
