#include "profile/nccl_tests_log.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"

namespace sextant {

namespace {
struct Program {
    std::string_view name;
    NcclTestOp op;
};
// The nccl-tests binaries of the collectives Sextant models (src/*.cu of nccl-tests).
constexpr std::array<Program, 7> kPrograms = {{{"all_reduce_perf", NcclTestOp::AllReduce},
                                               {"all_gather_perf", NcclTestOp::AllGather},
                                               {"reduce_scatter_perf", NcclTestOp::ReduceScatter},
                                               {"alltoall_perf", NcclTestOp::AllToAll},
                                               {"sendrecv_perf", NcclTestOp::SendRecv},
                                               {"broadcast_perf", NcclTestOp::Broadcast},
                                               {"reduce_perf", NcclTestOp::Reduce}}};
// nccl-tests binaries whose collectives the model does not price.
constexpr std::array<std::string_view, 4> kUnmodelled = {"alltoallv_perf", "gather_perf", "scatter_perf", "hypercube_perf"};

std::vector<std::string_view> split(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        const std::size_t start = i;
        while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
        if (i > start) out.push_back(text.substr(start, i - start));
    }
    return out;
}

std::optional<std::int64_t> integer(std::string_view t) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
    return v;
}

std::optional<double> number(std::string_view t) {
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::optional<NcclTestOp> program_op(std::string_view program) {
    for (const Program& p : kPrograms)
        if (p.name == program) return p.op;
    return std::nullopt;
}

// The nccl-tests binary a token names ("./build/all_reduce_perf", "all_gather_perf"), if any.
std::optional<std::string> program_in(std::string_view token) {
    const std::size_t slash = token.find_last_of('/');
    const std::string_view base = slash == std::string_view::npos ? token : token.substr(slash + 1);
    for (const Program& p : kPrograms)
        if (base == p.name) return std::string(p.name);
    for (std::string_view p : kUnmodelled)
        if (base == p) return std::string(p);
    return std::nullopt;
}

// NCCL_VERSION_CODE as nccl-tests prints it: major x 10000 + minor x 100 + patch since 2.9.
std::string nccl_version(std::string_view code_text) {
    const auto code = integer(code_text);
    if (!code || *code < 20900) return std::string(code_text);
    return std::to_string(*code / 10000) + "." + std::to_string(*code / 100 % 100) + "." + std::to_string(*code % 100);
}

// Where each column of the result table is, from the header line's names.
struct Columns {
    std::int64_t line = 0;
    std::size_t count = 0;  // fields per row
    std::optional<std::size_t> redop, root;
    std::size_t type = 2;
    std::vector<std::size_t> results;  // the "time" column of out-of-place, then in-place
    bool counts_wrong = true;          // "#wrong" rather than "error"
    bool timestamp = false;            // a trailing "date time" pair
};

class Parser {
public:
    Parser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

    std::vector<NcclTestsRun> parse() {
        std::size_t start = 0;
        while (start <= text_.size()) {
            std::size_t end = text_.find('\n', start);
            if (end == std::string_view::npos) end = text_.size();
            ++line_;
            read_line(strip(text_.substr(start, end - start)));
            if (end == text_.size()) break;
            start = end + 1;
        }
        finish();
        if (runs_.empty())
            throw InputError(file_, "", "holds no nccl-tests run (no '# nThread ... nGpus ...' header and result table)");
        return std::move(runs_);
    }

private:
    [[noreturn]] void fail(std::int64_t line, std::string value, const std::string& rule) const {
        throw InputError(file_ + ":" + std::to_string(line), std::move(value), rule);
    }
    static std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

    // A carriage return, and OpenMPI's --tag-output prefix "[1,0]<stdout>:".
    static std::string_view strip(std::string_view line) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (starts_with(line, "[")) {
            const std::size_t tag = line.find("]<stdout>:");
            if (tag != std::string_view::npos && tag < 16) line.remove_prefix(tag + 10);
        }
        return line;
    }

    bool run_started() const { return run_ && (seen_parameters_ || !run_->rows.empty() || columns_); }

    void begin() {
        finish();
        run_ = NcclTestsRun{};
        run_->first_line = line_;
        run_->command = command_;
        command_.clear();
        seen_parameters_ = false;
        columns_.reset();
        closed_ = false;
    }

    void read_line(std::string_view raw) {
        const std::size_t first = raw.find_first_not_of(" \t");
        if (first == std::string_view::npos) return;
        const std::string_view line = raw.substr(first);
        if (line.front() == '#') return read_comment(line.substr(1));
        const auto t = split(line);
        if (run_ && columns_ && !closed_ && integer(t.front())) return read_row(t);
        for (std::string_view token : t)
            if (program_in(token)) {
                command_ = std::string(line);
                if (run_ && !columns_ && run_->command.empty()) run_->command = command_;
                break;
            }
    }

    void read_comment(std::string_view body) {
        const auto t = split(body);
        if (t.empty()) return;
        if (t[0] == "nccl-tests" && t.size() >= 3 && t[1] == "version") {
            begin();
            run_->version = std::string(t[2]);
            for (std::string_view token : t)
                if (starts_with(token, "nccl-library=")) run_->nccl = nccl_version(token.substr(13));
            return;
        }
        if (t[0] == "Collective" && t.size() >= 4 && t[1] == "test" && t[2] == "starting:") {
            if (!run_ || run_started()) begin();
            run_->program = std::string(t[3]);
            return;
        }
        if (t[0] == "Collective" && t.size() >= 3 && t[2] == "concluded:") {
            closed_ = true;
            return;
        }
        if (t[0] == "nThread") return read_parameters(t);
        if (t[0] == "Rank") return read_rank(body);
        if (t[0] == "..." && run_ && !columns_)
            fail(line_, "...", "nccl-tests cut its device list at 2 KiB per process: the rank count cannot be read; "
                               "run fewer GPUs per process (-g 1 under mpirun)");
        if (std::find(t.begin(), t.end(), "size") != t.end() && std::find(t.begin(), t.end(), "algbw") != t.end())
            return read_columns(t);
        if (t[0] == "Out" && t.size() >= 6 && t[1] == "of" && t[2] == "bounds" && t[3] == "values" && t[4] == ":") {
            if (!run_) return;
            const auto n = integer(t[5]);
            if (!n || *n < 0) fail(line_, quoted(t[5]), "the count of failed results must be a whole number");
            run_->out_of_bounds = *n;
            run_->out_of_bounds_line = line_;
            return;
        }
        if (t[0] == "Avg" && t.size() >= 5 && t[1] == "bus" && t[2] == "bandwidth" && t[3] == ":") {
            if (!run_) return;
            const auto v = number(t[4]);
            if (!v || *v < 0) fail(line_, quoted(t[4]), "the average bus bandwidth must be a number");
            run_->avg_busbw_gbps = *v;
            check_average();
        }
    }

    void read_parameters(const std::vector<std::string_view>& t) {
        if (run_ && seen_parameters_) {
            if (!columns_ && run_->rows.empty())
                fail(line_, "", "a second '# nThread' header before any result: the processes ran separate single-GPU "
                                "tests (nccl-tests built without MPI=1 and launched by mpirun); rebuild with make MPI=1");
            begin();
        } else if (!run_ || run_started()) {
            begin();
        }
        seen_parameters_ = true;
        std::int64_t threads = 1, gpus = 1;
        for (std::size_t i = 0; i + 1 < t.size(); ++i) {
            if (t[i] == "nThread") threads = integer(t[i + 1]).value_or(0);
            if (t[i] == "nGpus") gpus = integer(t[i + 1]).value_or(0);
        }
        // One process drives one node's GPUs: a product past 65,536 is not a log of a real run,
        // and bounding each factor first keeps the product from overflowing.
        constexpr std::int64_t kMaxRanksPerProcess = std::int64_t{1} << 16;
        if (threads < 1 || gpus < 1) fail(line_, "", "'# nThread N nGpus M' needs positive whole numbers");
        if (threads > kMaxRanksPerProcess || gpus > kMaxRanksPerProcess || threads * gpus > kMaxRanksPerProcess)
            fail(line_, "", "'# nThread N nGpus M' gives N x M ranks a process: at most 65536");
        ranks_per_process_ = threads * gpus;
    }

    // "Rank N [Group G] Pid P on HOST device D [BUS] NAME..."
    void read_rank(std::string_view body) {
        if (!run_ || columns_) fail(line_, "", "a '#  Rank' line outside a run's device list");
        const auto t = split(body);
        std::size_t i = 2;
        if (t.size() > 3 && t[2] == "Group") i = 4;
        const bool shape = t.size() >= i + 8 && t[i] == "Pid" && t[i + 2] == "on" && t[i + 4] == "device" &&
                           starts_with(t[i + 6], "[");
        const auto rank = shape ? integer(t[1]) : std::nullopt;
        const auto device = shape ? integer(t[i + 5]) : std::nullopt;
        if (!rank || !device)
            fail(line_, "", "malformed '#  Rank N Group G Pid P on HOST device D [BUS] NAME' line");
        if (*rank != static_cast<std::int64_t>(run_->ranks.size()))
            fail(line_, std::to_string(*rank), "ranks must be listed in order from 0 (expected rank " +
                                                   std::to_string(run_->ranks.size()) + ")");
        const std::size_t name_at = body.find(t[i + 6]) + t[i + 6].size();
        const std::size_t name_start = body.find_first_not_of(" \t", name_at);
        run_->ranks.push_back({*rank, std::string(t[i + 3]), *device,
                               name_start == std::string_view::npos ? "" : std::string(body.substr(name_start))});
    }

    void read_columns(const std::vector<std::string_view>& t) {
        if (!run_) fail(line_, "", "a result table before the '# nThread ... nGpus ...' header");
        if (columns_) fail(line_, "", "a second column header in one run");
        Columns c;
        c.line = line_;
        c.count = t.size();
        if (t[0] != "size" || t.size() < 3 || t[1] != "count" || t[2] != "type")
            fail(line_, "", "the column header must start with size, count and type");
        for (std::size_t i = 3; i < t.size(); ++i) {
            if (t[i] == "redop") c.redop = i;
            else if (t[i] == "root") c.root = i;
            else if (t[i] == "cputime")
                fail(line_, "cputime", "the times are CPU launch times (nccl-tests -C 1), not collective durations; rerun without -C");
            else if (t[i] == "time") c.results.push_back(i);
            else if (t[i] == "timestamp") c.timestamp = true;
        }
        if (c.results.empty() || c.results.size() > 2) fail(line_, "", "expected one time column per out-of-place and in-place result");
        for (std::size_t at : c.results) {
            if (at + 3 >= t.size() || t[at + 1] != "algbw" || t[at + 2] != "busbw" || (t[at + 3] != "#wrong" && t[at + 3] != "error"))
                fail(line_, "", "each result must be time, algbw, busbw and #wrong (or error)");
            c.counts_wrong = t[at + 3] == "#wrong";
        }
        run_->counts_wrong = c.counts_wrong;
        columns_ = c;
    }

    NcclTestsResult result(const std::vector<std::string_view>& t, std::size_t at) const {
        NcclTestsResult r;
        const auto time = number(t[at]), algbw = number(t[at + 1]), busbw = number(t[at + 2]);
        if (!time || *time <= 0) fail(line_, quoted(t[at]), "the time must be a positive number of microseconds");
        if (!algbw || *algbw < 0) fail(line_, quoted(t[at + 1]), "algbw must be a number of GB/s");
        if (!busbw || *busbw < 0) fail(line_, quoted(t[at + 2]), "busbw must be a number of GB/s");
        r.time_us = *time;
        r.algbw_gbps = *algbw;
        r.busbw_gbps = *busbw;
        if (t[at + 3] != "N/A") {
            const auto wrong = number(t[at + 3]);
            if (!wrong || *wrong < 0) fail(line_, quoted(t[at + 3]), "the #wrong column must be a count or N/A");
            r.wrong = *wrong;
        }
        return r;
    }

    void read_row(const std::vector<std::string_view>& t) {
        const Columns& c = *columns_;
        const std::size_t expected = c.count + (c.timestamp ? 1 : 0);
        if (t.size() != expected)
            fail(line_, std::to_string(t.size()) + " fields",
                 "the column header (line " + std::to_string(c.line) + ") has " + std::to_string(expected) +
                     ": a cut or edited row");
        NcclTestsRow row;
        row.line = line_;
        const auto size = integer(t[0]);
        if (!size || *size < 0) fail(line_, quoted(t[0]), "the size must be a whole number of bytes");
        row.bytes = static_cast<double>(*size);
        if (!integer(t[1])) fail(line_, quoted(t[1]), "the count must be a whole number of elements");
        row.type = std::string(t[c.type]);
        if (c.redop) row.redop = std::string(t[*c.redop]);
        if (c.root) {
            const auto root = integer(t[*c.root]);
            if (!root) fail(line_, quoted(t[*c.root]), "the root must be a rank or -1");
            row.root = *root;
        }
        row.out_of_place = result(t, c.results[0]);
        if (c.results.size() == 2) row.in_place = result(t, c.results[1]);
        if (c.timestamp) row.timestamp = std::string(t[t.size() - 2]) + "T" + std::string(t[t.size() - 1]);
        // nccl-tests prints algbw = size / time: a row whose columns slipped fails this.
        for (const NcclTestsResult* r : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr}) {
            if (!r) continue;
            const double algbw = row.bytes / r->time_us / 1e3;
            if (std::abs(r->algbw_gbps - algbw) > 0.011 + 0.01 * algbw)
                fail(line_, std::to_string(r->algbw_gbps) + " GB/s",
                     "algbw must be size / time (" + std::to_string(algbw) + " GB/s here): a shifted or edited row");
        }
        run_->rows.push_back(std::move(row));
    }

    // The footer's average is the mean busbw of every printed result: a mismatch means rows
    // were lost or edited.
    void check_average() const {
        double sum = 0;
        std::size_t n = 0;
        for (const NcclTestsRow& r : run_->rows) {
            sum += r.out_of_place.busbw_gbps;
            ++n;
            if (r.in_place) {
                sum += r.in_place->busbw_gbps;
                ++n;
            }
        }
        if (n == 0) return;
        const double mean = sum / static_cast<double>(n), avg = *run_->avg_busbw_gbps;
        if (std::abs(mean - avg) > 0.06 + 0.002 * avg)
            fail(line_, std::to_string(avg),
                 "is not the mean busbw of the rows above (" + std::to_string(mean) + " GB/s): rows were lost or edited");
    }

    std::optional<NcclTestOp> op_from_file_name() const {
        std::string name = file_.substr(file_.find_last_of('/') == std::string::npos ? 0 : file_.find_last_of('/') + 1);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        const std::pair<std::string_view, NcclTestOp> hints[] = {
            {"all_reduce", NcclTestOp::AllReduce},   {"allreduce", NcclTestOp::AllReduce},
            {"all_gather", NcclTestOp::AllGather},   {"allgather", NcclTestOp::AllGather},
            {"reduce_scatter", NcclTestOp::ReduceScatter}, {"reducescatter", NcclTestOp::ReduceScatter},
            {"alltoall", NcclTestOp::AllToAll},      {"all_to_all", NcclTestOp::AllToAll},
            {"sendrecv", NcclTestOp::SendRecv},      {"send_recv", NcclTestOp::SendRecv},
            {"broadcast", NcclTestOp::Broadcast}};
        std::set<NcclTestOp> found;
        for (const auto& [hint, op] : hints)
            if (name.find(hint) != std::string::npos) found.insert(op);
        if (found.empty() && name.find("reduce_perf") != std::string::npos) found.insert(NcclTestOp::Reduce);
        if (found.size() != 1) return std::nullopt;
        return *found.begin();
    }

    // busbw / algbw of the rows whose bandwidths are printed precisely enough to tell.
    std::vector<double> bus_ratios() const {
        std::vector<double> out;
        for (const NcclTestsRow& r : run_->rows)
            if (r.out_of_place.algbw_gbps >= 1.0) out.push_back(r.out_of_place.busbw_gbps / r.out_of_place.algbw_gbps);
        return out;
    }

    // The collectives whose bus factor on n ranks, redop and root fit the rows.
    std::vector<NcclTestOp> ops_that_fit(std::int64_t n) const {
        auto ratios = bus_ratios();
        if (ratios.empty()) return {};
        std::sort(ratios.begin(), ratios.end());
        const double ratio = ratios[ratios.size() / 2];
        const NcclTestsRow& row = run_->rows.front();
        std::vector<NcclTestOp> out;
        for (const Program& p : kPrograms) {
            const bool reduces = p.op == NcclTestOp::AllReduce || p.op == NcclTestOp::ReduceScatter || p.op == NcclTestOp::Reduce;
            const bool rooted = p.op == NcclTestOp::Broadcast || p.op == NcclTestOp::Reduce;
            if (std::abs(busbw_factor(p.op, n) - ratio) > 0.02 * ratio) continue;
            if (columns_->redop && (row.redop == "none") == reduces && p.op != NcclTestOp::SendRecv) continue;
            if (columns_->root && (row.root >= 0) != rooted) continue;
            out.push_back(p.op);
        }
        return out;
    }

    void identify_op() {
        NcclTestsRun& r = *run_;
        std::string program = r.program;
        if (!program.empty()) r.op_from = "log";
        if (program.empty() && !r.command.empty())
            for (std::string_view token : split(r.command))
                if (auto p = program_in(token)) {
                    program = *p;
                    r.op_from = "command line";
                    break;
                }
        if (!program.empty()) {
            const auto op = program_op(program);
            if (!op)
                fail(r.first_line, quoted(program),
                     "Sextant models all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast and reduce; "
                     "this test is none of them");
            r.op = *op;
            r.program = program;
            return;
        }
        if (const auto op = op_from_file_name()) {
            r.op = *op;
            r.op_from = "file name";
        } else {
            const auto fits = ops_that_fit(static_cast<std::int64_t>(r.ranks.size()));
            if (fits.size() != 1)
                fail(r.first_line, "", "cannot tell which nccl-tests test this log ran: keep its command line in the log or "
                                       "name the file after the test (e.g. all_gather_perf.log)");
            r.op = fits.front();
            r.op_from = "bus factor";
        }
        for (const Program& p : kPrograms)
            if (p.op == r.op) r.program = std::string(p.name);
    }

    // Every row's busbw / algbw must be the op's factor on the listed rank count.
    void check_bus_factor() const {
        const NcclTestsRun& r = *run_;
        const auto n = static_cast<std::int64_t>(r.ranks.size());
        const double factor = busbw_factor(r.op, n);
        for (const NcclTestsRow& row : r.rows) {
            const NcclTestsResult& res = row.out_of_place;
            if (std::abs(res.busbw_gbps - res.algbw_gbps * factor) > 0.011 + 0.01 * res.busbw_gbps)
                fail(row.line, std::to_string(res.busbw_gbps) + " GB/s",
                     "busbw must be algbw x " + std::string(nccl_test_op_name(r.op)) + "'s bus factor on " + std::to_string(n) +
                         " ranks (" + std::to_string(factor) + "): the test (from the " + r.op_from +
                         ") or the rank lines do not match the run");
        }
    }

    void finish() {
        if (!run_) return;
        NcclTestsRun& r = *run_;
        if (!seen_parameters_) fail(r.first_line, "", "a run without its '# nThread ... nGpus ...' header");
        if (r.ranks.empty()) fail(r.first_line, "", "no '#  Rank ...' lines: the rank count cannot be read");
        if (!columns_) fail(r.first_line, "", "no result table (the run stopped before its first result)");
        if (r.rows.empty()) fail(columns_->line, "", "no result rows below the column header");
        const auto n = static_cast<std::int64_t>(r.ranks.size());
        if (n < 2)
            fail(r.first_line, "1 rank", "a single-GPU run moves nothing between GPUs; run one process per GPU of the group");
        if (n % ranks_per_process_ != 0)
            fail(r.first_line, std::to_string(n) + " ranks",
                 "not a multiple of the GPUs per process (nThread x nGpus = " + std::to_string(ranks_per_process_) + ")");
        std::map<std::string, std::int64_t> per_host;
        for (const NcclTestsRank& rank : r.ranks) ++per_host[rank.host];
        for (const auto& [host, count] : per_host)
            if (count != per_host.begin()->second)
                fail(r.first_line, host + ": " + std::to_string(count) + " GPUs, " + per_host.begin()->first + ": " +
                                       std::to_string(per_host.begin()->second),
                     "every host of a multi-node run must hold the same number of GPUs");
        identify_op();
        check_bus_factor();
        runs_.push_back(std::move(r));
        run_.reset();
    }

    std::string_view text_;
    const std::string& file_;
    std::int64_t line_ = 0;
    std::optional<NcclTestsRun> run_;
    std::optional<Columns> columns_;
    bool seen_parameters_ = false, closed_ = false;
    std::int64_t ranks_per_process_ = 1;
    std::string command_;
    std::vector<NcclTestsRun> runs_;
};
}  // namespace

std::vector<std::string> NcclTestsRun::hosts() const {
    std::vector<std::string> out;
    for (const NcclTestsRank& r : ranks)
        if (std::find(out.begin(), out.end(), r.host) == out.end()) out.push_back(r.host);
    return out;
}

MeasuredSpan NcclTestsRun::span() const {
    const auto h = hosts();
    if (h.size() == 1) return MeasuredSpan::Node;
    return h.size() == ranks.size() ? MeasuredSpan::Rail : MeasuredSpan::Cluster;
}

std::vector<NcclTestsRun> parse_nccl_tests_log(std::string_view text, const std::string& file) {
    return Parser(text, file).parse();
}

std::optional<std::string> gpu_type_of_device(std::string_view name) {
    // cudaDeviceProp::name of each GPU type with a preset (the PCIe and NVL variants have none).
    const std::pair<std::string_view, std::string_view> names[] = {
        {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"}, {"NVIDIA H800", "H800-SXM5-80GB"},
        {"NVIDIA H800 80GB HBM3", "H800-SXM5-80GB"}, {"NVIDIA H200", "H200-SXM-141GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"}, {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"NVIDIA B200", "B200"}, {"NVIDIA GB200", "GB200"}};
    for (const auto& [device, type] : names)
        if (name == device) return std::string(type);
    return std::nullopt;
}

ImportedSweeps nccl_tests_sweeps(const std::vector<NcclTestsRun>& runs, const std::string& file, WrongResults policy,
                                 const std::string& date, const std::string& date_from) {
    ImportedSweeps out;
    const auto at = [&](std::int64_t line) { return file + ":" + std::to_string(line); };
    for (const NcclTestsRun& run : runs) {
        const std::string what = run.program + " (" + at(run.first_line) + ")";
        // Checked results carry a #wrong count per row (an "error" deviation before 2.13, N/A
        // under -c 0); an old log says only in its footer that some failed.
        const bool checked = std::all_of(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& r) { return r.out_of_place.wrong.has_value(); });
        const bool row_counts = run.counts_wrong && checked;
        const bool verified = checked && (row_counts || run.out_of_bounds == std::optional<std::int64_t>(0));
        if (run.out_of_bounds.value_or(0) > 0 && !row_counts) {
            if (policy == WrongResults::Reject)
                throw InputError(at(run.out_of_bounds_line), std::to_string(*run.out_of_bounds) + " FAILED",
                                 "nccl-tests found wrong results and the log does not say which; the run calibrates nothing");
            out.notes.push_back(what + ": left out whole: " + std::to_string(*run.out_of_bounds) +
                                " results failed and the log does not say which");
            continue;
        }
        std::map<std::pair<std::string, std::string>, CollectiveSweep> sweeps;
        std::size_t empty = 0, dropped = 0;
        for (const NcclTestsRow& row : run.rows) {
            if (row.bytes <= 0) {
                ++empty;
                continue;
            }
            const bool oop_wrong = run.counts_wrong && row.out_of_place.wrong.value_or(0) > 0;
            const bool ip_wrong = run.counts_wrong && row.in_place && row.in_place->wrong.value_or(0) > 0;
            if ((oop_wrong || ip_wrong) && policy == WrongResults::Reject) {
                const double n = oop_wrong ? *row.out_of_place.wrong : *row.in_place->wrong;
                throw InputError(at(row.line), "#wrong " + std::to_string(static_cast<std::int64_t>(n)),
                                 "nccl-tests found wrong elements in the " + std::string(oop_wrong ? "out-of-place" : "in-place") +
                                     " result: a run that computes wrong data calibrates nothing; fix and rerun, or "
                                     "pass --drop-wrong to import the results that verified");
            }
            if (oop_wrong) {
                ++dropped;
                continue;
            }
            CollectiveSweep& s = sweeps[{row.type, row.redop}];
            if (s.samples.empty()) {
                s.op = run.op;
                s.span = run.span();
                s.ranks = static_cast<std::int64_t>(run.ranks.size());
                s.nodes = static_cast<std::int64_t>(run.hosts().size());
                s.dtype = row.type;
                SweepProvenance& p = s.provenance;
                p.tool = "nccl-tests " + (run.version.empty() ? std::string("(before 2.17)") : run.version);
                p.file = file;
                p.date = row.timestamp.empty() ? date : row.timestamp;
                p.date_from = row.timestamp.empty() ? date_from : "log (local time)";
                p.nccl = run.nccl;
                p.hosts = run.hosts();
                p.device = run.ranks.front().device_name;
                p.command = run.command;
                p.verified = verified;
            }
            s.samples.push_back({row.bytes, row.out_of_place.time_us, row.in_place && !ip_wrong ? row.in_place->time_us : 0.0,
                                 row.line});
        }
        if (empty > 0)
            out.notes.push_back(what + ": " + std::to_string(empty) + " rows of size 0 (fewer elements than ranks) left out");
        if (dropped > 0)
            out.notes.push_back(what + ": " + std::to_string(dropped) + " rows whose out-of-place result was wrong left out");
        if (!verified) out.notes.push_back(what + ": results not verified (nccl-tests -c 0, or no footer)");
        for (auto& [key, sweep] : sweeps) out.sweeps.push_back(std::move(sweep));
    }
    return out;
}

}  // namespace sextant
