// The timeline's page: one self-contained HTML file (inline style and script, the data as JSON
// in the page, nothing fetched) whose script draws the lanes and the replay. Everything that
// comes from the input reaches the page as escaped HTML text or as JSON that cannot close its
// <script> element, and the script puts it in the document only as text.
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>

#include "timeline_detail.hpp"
#include "timeline_page_assets.hpp"

namespace viaduct::timeline::detail {
namespace {

// The fields the page's hover and replay show, beside t and the phase.
const char *const kPageColumns[] = {"cpu_user_pct",
                                    "cpu_sys_pct",
                                    "cpu_other_pct",
                                    "cpu_iowait_pct",
                                    "host_steal",
                                    "proc_cpu",
                                    "disk_read_mb_s",
                                    "disk_write_mb_s",
                                    "proc_read_mb_s",
                                    "proc_write_mb_s",
                                    "dev_read_mb_s",
                                    "dev_write_mb_s",
                                    "dev_in_flight",
                                    "dev_busy",
                                    "net_sent_mb_s",
                                    "net_received_mb_s",
                                    "major_faults_s",
                                    "minor_faults_s",
                                    "rss_mb",
                                    "records",
                                    "mb_done",
                                    "records_s",
                                    "mb_s"};

const Field &field_named(const std::string &name) {
    for (const Field &f : numeric_fields())
        if (name == f.name) return f;
    throw std::logic_error("the timeline has no field " + name);
}

// Text made safe as HTML element content or a quoted attribute value.
std::string html_escape(const std::string &s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// JSON made safe inside <script>: '<', '>' and '&' occur only within its strings, where their
// \u escapes mean the same, so no "</script" or "<!--" can appear in the element's text.
std::string script_safe(const std::string &json) {
    std::string out;
    out.reserve(json.size());
    for (char c : json) {
        if (c == '<')
            out += "\\u003c";
        else if (c == '>')
            out += "\\u003e";
        else if (c == '&')
            out += "\\u0026";
        else
            out += c;
    }
    return out;
}

template <typename Each>
std::string json_array(std::span<const Row> rows, Each each) {
    std::string s = "[";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i > 0) s += ',';
        s += each(rows[i]);
    }
    return s + "]";
}

std::string strings_json(const std::vector<std::string> &list) {
    std::string s = "[";
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) s += ',';
        s += json_string(list[i]);
    }
    return s + "]";
}

// One node: its index, host, where its disk figures come from, and its samples as columns.
std::string node_json(const Node &node, std::span<const Row> rows) {
    const bool device = !rows.empty() && rows.front().device_disk;
    std::string s =
        "{\"index\":" + std::to_string(node.index) + ",\"host\":" + json_string(node.host) +
        ",\"disk\":\"" + (device ? "device" : "process") +
        "\",\"t\":" + json_array(rows, [](const Row &r) { return number_text(r.t, 3); }) +
        ",\"phase\":" +
        json_array(rows, [](const Row &r) { return std::to_string(r.sample->phase); }) +
        ",\"cols\":{";
    bool first = true;
    for (const char *name : kPageColumns) {
        const Field &f = field_named(name);
        s += std::string(first ? "" : ",") + "\"" + name + "\":" +
             json_array(rows, [&f](const Row &r) { return number_text(f.value(r), f.decimals); });
        first = false;
    }
    return s + "}}";
}

std::string page_json(const Input &in, const std::vector<Row> &rows) {
    std::vector<std::string> phases = in.phase_names;
    for (const Row &r : rows)  // phases past the table get the names the files give them
        while (r.sample->phase >= phases.size())
            phases.push_back("phase " + std::to_string(phases.size()));
    std::string s = "{\"title\":" + json_string(in.title) + ",\"phases\":" + strings_json(phases) +
                    ",\"needles\":" + strings_json(in.needles) + ",\"fields\":{";
    bool first = true;
    for (const char *name : kPageColumns) {
        const Field &f = field_named(name);
        s += std::string(first ? "" : ",") + "\"" + name + "\":{\"unit\":" + json_string(f.unit) +
             ",\"meaning\":" + json_string(f.meaning) + "}";
        first = false;
    }
    s += "},\"nodes\":[";
    std::size_t from = 0;
    for (std::size_t i = 0; i < in.nodes.size(); ++i) {
        const std::size_t count = in.nodes[i].samples.size();
        if (i > 0) s += ',';
        s += node_json(in.nodes[i], std::span<const Row>(rows).subspan(from, count));
        from += count;
    }
    return s + "]}";
}

// The parts that need no script: the title, the needles and the report.
std::string static_parts(const Input &in) {
    std::string s =
        "<header><h1>" + html_escape(in.title) + "</h1><p id=\"summary\"></p></header>\n";
    s += std::string(kPageBody);
    std::string needles;
    for (const std::string &n : in.needles) needles += "<li>" + html_escape(n) + "</li>\n";
    if (needles.empty()) needles = "<li class=\"none\">no needle found</li>\n";
    s += "<aside>\n<h2>Needles</h2>\n<ul id=\"needles\">\n" + needles + "</ul>\n";
    // The parser drops one line break right after <pre>: this one, not the report's own.
    s += "<h2>Report</h2>\n<pre id=\"report\">\n" + html_escape(in.report) + "</pre>\n</aside>\n";
    return s + "</div>\n";
}

}  // namespace

std::string page_text(const Input &in, const std::vector<Row> &rows) {
    std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    s += "<title>" + html_escape(in.title) + "</title>\n";
    s += std::string("<script>") + kPageErrorHook + "</script>\n";
    s += std::string("<style>") + kPageStyle + "</style>\n</head>\n";
    s += "<body data-ready=\"0\" data-errors=\"0\">\n" + static_parts(in);
    s += "<script type=\"application/json\" id=\"timeline-data\">" +
         script_safe(page_json(in, rows)) + "</script>\n";
    s += std::string("<script>") + kPageScript + "</script>\n</body>\n</html>\n";
    return s;
}

}  // namespace viaduct::timeline::detail
