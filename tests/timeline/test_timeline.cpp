// The timeline writer: the four files and their documented fields, input text escaped in the
// page, directories refused, a missing or failing gnuplot named, and nothing half-written left.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "scoped_env.hpp"
#include "synthetic.hpp"
#include "viaduct/timeline.hpp"

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFiles = {"timeline.jsonl", "timeline.csv", "timeline.png",
                                         "timeline.html"};

// A fresh directory under TMPDIR (or /tmp), removed with everything in it.
class TempDir {
  public:
    TempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/timeline-test-XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string &path() const { return path_; }

  private:
    std::string path_;
};

std::string slurp(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::set<std::string> names_in(const std::string &dir) {
    std::set<std::string> names;
    for (const auto &e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream s(text);
    for (std::string line; std::getline(s, line);) lines.push_back(line);
    return lines;
}

// The field names of docs/timeline.md's table, in its order: rows "| `name` | unit | meaning |".
std::vector<std::string> documented_fields() {
    const std::string doc = slurp(TIMELINE_DOCS);
    std::vector<std::string> names;
    // A row starts "| `", then the name (a-z, 0-9, _), then "` |".
    const auto name_char = [](char c) {
        return (c >= 'a' && c <= 'z') || std::isdigit(c) || c == '_';
    };
    for (const std::string &line : lines_of(doc)) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::size_t end = line.find("` |", 3);
        if (end == std::string::npos || end == 3) continue;
        const std::string name = line.substr(3, end - 3);
        if (std::all_of(name.begin(), name.end(), name_char)) names.push_back(name);
    }
    return names;
}

std::string write_error(const std::string &dir, const viaduct::timeline::Input &in) {
    try {
        viaduct::timeline::write(dir, in);
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "";
}

// A directory holding only a program named gnuplot: the shell script `body`.
std::string fake_gnuplot(const std::string &dir, const std::string &body) {
    const std::string bin = dir + "/bin";
    fs::create_directory(bin);
    std::ofstream(bin + "/gnuplot") << "#!/bin/sh\n" << body << "\n";
    fs::permissions(bin + "/gnuplot", fs::perms::owner_all);
    return bin;
}

std::size_t sample_count(const viaduct::timeline::Input &in) {
    std::size_t n = 0;
    for (const auto &node : in.nodes) n += node.samples.size();
    return n;
}

}  // namespace

TEST_CASE("the four files, each sample a JSON line and a CSV row with the documented fields",
          "[timeline]") {
    TempDir tmp;
    const std::string dir = tmp.path() + "/out/run1";  // absent, as are its parents
    const auto in = timeline_test::synthetic_input(4);
    const std::vector<std::string> paths = viaduct::timeline::write(dir + "/", in);
    REQUIRE(paths.size() == 4);
    for (std::size_t i = 0; i < kFiles.size(); ++i) CHECK(paths[i] == dir + "/" + kFiles[i]);
    CHECK(names_in(dir) == std::set<std::string>(kFiles.begin(), kFiles.end()));

    const std::vector<std::string> documented = documented_fields();
    REQUIRE(documented.size() > 40);
    const std::vector<std::string> jsonl = lines_of(slurp(dir + "/timeline.jsonl"));
    REQUIRE(jsonl.size() == sample_count(in));
    std::set<int> nodes_seen;
    for (const std::string &line : jsonl) {
        const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
        std::vector<std::string> keys;
        for (const auto &item : j.items()) keys.push_back(item.key());
        REQUIRE(keys == documented);
        nodes_seen.insert(j["node"].get<int>());
        CHECK(j["t"].get<double>() >= 0);
        CHECK(j["cpu_user_pct"].get<double>() >= 0);
    }
    CHECK(nodes_seen == std::set<int>{0, 1, 2, 3});

    const std::vector<std::string> csv = lines_of(slurp(dir + "/timeline.csv"));
    REQUIRE(csv.size() == sample_count(in) + 1);
    std::string header;
    for (const std::string &name : documented) header += (header.empty() ? "" : ",") + name;
    CHECK(csv[0] == header);
    CHECK(csv[1].rfind("0,host-0,0,1,", 0) == 0);

    CHECK(slurp(dir + "/timeline.png").rfind("\x89PNG\r\n\x1a\n", 0) == 0);
    const std::string html = slurp(dir + "/timeline.html");
    CHECK(html.find("<script type=\"application/json\" id=\"timeline-data\">") !=
          std::string::npos);
    CHECK(html.find("needle: node 2, phase 3b") != std::string::npos);
    // Nothing loaded from elsewhere: no src or href, no address but SVG's namespace.
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("href=") == std::string::npos);
    std::string addresses = html;
    for (std::size_t at; (at = addresses.find("http://www.w3.org/2000/svg")) != std::string::npos;)
        addresses.erase(at, 26);
    CHECK(addresses.find("http") == std::string::npos);
    CHECK(addresses.find("url(") == std::string::npos);
}

TEST_CASE("the first sample's rates are zero; a later one's are the node's rates", "[timeline]") {
    TempDir tmp;
    const auto in = timeline_test::synthetic_input(1, 40);
    viaduct::timeline::write(tmp.path(), in);
    const std::vector<std::string> jsonl = lines_of(slurp(tmp.path() + "/timeline.jsonl"));
    REQUIRE(jsonl.size() == 40);
    const auto first = nlohmann::json::parse(jsonl[0]), later = nlohmann::json::parse(jsonl[20]);
    CHECK(first["interval_s"].get<double>() == 0);
    CHECK(first["disk_read_mb_s"].get<double>() == 0);
    const viaduct::CounterRates r =
        viaduct::rates(in.nodes[0].samples[19], in.nodes[0].samples[20]);
    CHECK(later["interval_s"].get<double>() == Approx(0.1));
    CHECK(later["dev_read_mb_s"].get<double>() == Approx(r.dev_read_mb_s).margin(0.001));
    CHECK(later["net_sent_mb_s"].get<double>() == Approx(r.net_sent_mb_s).margin(0.001));
    CHECK(later["phase"].get<std::string>() == "3a");  // 40 samples: 10 per phase
    CHECK(later["t"].get<double>() == Approx(2.0));
}

TEST_CASE("text from the input cannot end the page's script or add markup", "[timeline]") {
    TempDir tmp;
    const std::string hostile = "evil</script><b>bold</b>\"quoted' & <!-- \xff";
    auto in = timeline_test::synthetic_input(3, 40, hostile);
    in.title = "title </script><script>alert(1)</script>";
    in.needles.push_back("needle: node 1 " + hostile);
    viaduct::timeline::write(tmp.path(), in);
    const std::string html = slurp(tmp.path() + "/timeline.html");
    CHECK(html.find("</script><b>") == std::string::npos);
    CHECK(html.find("<script>alert(1)") == std::string::npos);
    CHECK(html.find("<!-- ") == std::string::npos);
    CHECK(html.find("<title>title &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>") !=
          std::string::npos);
    CHECK(html.find("evil&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;&quot;quoted&#39; &amp;") !=
          std::string::npos);
    // The embedded JSON still parses, with the host as it was given (the bad byte replaced).
    const std::string open = "<script type=\"application/json\" id=\"timeline-data\">";
    const std::size_t from = html.find(open) + open.size();
    const auto data = nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
    CHECK(data["nodes"][1]["host"].get<std::string>() ==
          "evil</script><b>bold</b>\"quoted' & <!-- \xef\xbf\xbd");
    // Every line of the JSON lines parses; the CSV quotes the host.
    for (const std::string &line : lines_of(slurp(tmp.path() + "/timeline.jsonl")))
        CHECK_NOTHROW(nlohmann::json::parse(line));
    CHECK(slurp(tmp.path() + "/timeline.csv").find(",\"evil</script><b>bold</b>\"\"quoted' & ") !=
          std::string::npos);
}

TEST_CASE("a directory another user may change is refused, and nothing is written in it",
          "[timeline]") {
    TempDir tmp;
    const auto in = timeline_test::synthetic_input(2, 20);
    SECTION("writable by every user, not sticky") {
        const std::string dir = tmp.path() + "/open";
        fs::create_directory(dir);
        REQUIRE(::chmod(dir.c_str(), 0777) == 0);
        const std::string err = write_error(dir, in);
        CHECK(err.find(dir) != std::string::npos);
        CHECK(err.find("writable by every user") != std::string::npos);
        CHECK(names_in(dir).empty());
    }
    SECTION("owned by another user") {
        if (::geteuid() != 0) {
            WARN("not root: cannot give a directory to another user");
            return;
        }
        const std::string dir = tmp.path() + "/theirs";
        fs::create_directory(dir);
        REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
        const std::string err = write_error(dir, in);
        CHECK(err.find("owned by another user") != std::string::npos);
        CHECK(names_in(dir).empty());
    }
    SECTION("a directory that cannot be made is named") {
        const std::string file = tmp.path() + "/plain";
        std::ofstream(file) << "x";
        const std::string err = write_error(file + "/sub", in);
        CHECK(err.find(file + "/sub") != std::string::npos);
    }
}

TEST_CASE("a missing or failing gnuplot is named and leaves the directory as it was",
          "[timeline]") {
    TempDir tmp;
    const std::string dir = tmp.path() + "/out";
    const auto in = timeline_test::synthetic_input(2, 30);
    viaduct::timeline::write(dir, in);  // an earlier run's complete files
    std::vector<std::string> before;
    for (const std::string &f : kFiles) before.push_back(slurp(dir + "/" + f));
    auto later = timeline_test::synthetic_input(3, 30);
    std::string err;
    SECTION("failing") {
        const std::string bin =
            fake_gnuplot(tmp.path(), "echo 'line 3: unknown terminal type' >&2\nexit 3");
        testing_env::ScopedEnv path("PATH", bin);
        err = write_error(dir, later);
        CHECK(err.find("gnuplot failed (exit status 3): line 3: unknown terminal type") !=
              std::string::npos);
    }
    SECTION("drawing nothing") {
        testing_env::ScopedEnv path("PATH", fake_gnuplot(tmp.path(), "exit 0"));
        err = write_error(dir, later);
        CHECK(err.find("gnuplot drew no PNG") != std::string::npos);
    }
    SECTION("missing") {
        fs::create_directory(tmp.path() + "/empty");
        testing_env::ScopedEnv path("PATH", tmp.path() + "/empty");
        err = write_error(dir, later);
        CHECK(err.find("gnuplot not found") != std::string::npos);
    }
    CHECK(err.find(dir + "/timeline.png") != std::string::npos);
    CHECK(names_in(dir) == std::set<std::string>(kFiles.begin(), kFiles.end()));  // no temporaries
    for (std::size_t i = 0; i < kFiles.size(); ++i)
        CHECK(slurp(dir + "/" + kFiles[i]) == before[i]);
}

TEST_CASE("the directory is made with the umask's mode; odd input still draws", "[timeline]") {
    TempDir tmp;
    const mode_t old = ::umask(027);
    viaduct::timeline::Input in;  // no nodes at all
    in.title = "empty";
    const std::string dir = tmp.path() + "/new";
    const std::string err = write_error(dir, in);
    ::umask(old);
    CHECK(err.empty());
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0750);
    REQUIRE(::stat((dir + "/timeline.csv").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    CHECK(lines_of(slurp(dir + "/timeline.csv")).size() == 1);

    auto odd = timeline_test::synthetic_input(2, 10);
    odd.nodes[0].samples.resize(1);  // one instant
    odd.nodes[1].samples.clear();    // none
    odd.nodes[1].host = "newline\nhost";
    odd.phase_names.clear();  // phases known only by number
    CHECK(write_error(tmp.path() + "/odd", odd).empty());
    CHECK(slurp(tmp.path() + "/odd/timeline.jsonl").find("\"phase\":\"phase 0\"") !=
          std::string::npos);
}
