// Replaying libmsg message traces: the parser refuses malformed and cut-short files naming
// the line, a job's files must fit together, and a replayed send waits for the completions
// its rank recorded before posting it, plus the recorded gap.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "app/run.hpp"
#include "traffic/replay_trace.hpp"

using namespace sansim;

namespace {

const std::string kHead0 =
    "# viaduct-trace 1\n# rank 0 size 2 clock_monotonic_ns 1000 clock_realtime_ns 5000\n"
    "rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status\n";

std::string parse_error(const std::string &text) {
    try {
        parse_rank_trace(text, "t");
    } catch (const TraceError &e) {
        return e.what();
    }
    return "";
}

// A fresh directory holding the given rank files.
std::string write_job(const std::string &name, const std::vector<std::string> &files) {
    const auto dir = std::filesystem::temp_directory_path() / ("sansim-replay-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (std::size_t r = 0; r < files.size(); ++r)
        std::ofstream(dir / ("t." + std::to_string(r) + ".csv")) << files[r];
    return dir.string();
}

std::string rank_file(int rank, const std::string &records, int count) {
    return "# viaduct-trace 1\n# rank " + std::to_string(rank) +
           " size 2 clock_monotonic_ns 0 clock_realtime_ns 0\n"
           "rank,kind,peer,tag,bytes,protocol,post_ns,done_ns,status\n" +
           records + "# end records " + std::to_string(count) + " dropped 0\n";
}

ReplaySummary replay(const std::string &dir) {
    WorkloadOptions w;
    w.kind = "replay";
    w.replay_path = dir;
    Results r = run_simulation(make_topology("crossbar:2", 1), Params{}, w, 0);
    REQUIRE(r.complete);
    REQUIRE(r.replayed);
    return r.replay;
}

}  // namespace

TEST_CASE("a well-formed trace reads back", "[replay]") {
    const RankTrace t = parse_rank_trace(
        kHead0 +
            "0,send,1,7,100,eager,2000,2500,0\n0,recv,1,3,300000,rdma_read,3000,9000,0\n"
            "# end records 2 dropped 4\n",
        "t");
    REQUIRE(t.rank == 0);
    REQUIRE(t.size == 2);
    REQUIRE(t.dropped == 4);
    REQUIRE(t.ops.size() == 2);
    CHECK(t.ops[0].send);
    CHECK(t.ops[0].protocol == TraceProtocol::eager);
    CHECK(t.ops[0].post_ns == 6000);  // moved onto the wall clock: 5000 + (2000 - 1000)
    CHECK(!t.ops[1].send);
    CHECK(t.ops[1].bytes == 300000);
    CHECK(t.ops[1].protocol == TraceProtocol::rdma_read);
}

TEST_CASE("malformed traces are refused naming the line", "[replay]") {
    const std::string rec = "0,send,1,7,100,eager,2000,2500,0\n";
    CHECK(parse_error("") == "t:0: empty file, not a viaduct trace");
    CHECK(parse_error("hello\n").find("t:1: not a viaduct trace") == 0);
    CHECK(parse_error("# viaduct-trace 9\n").find("t:1: unsupported trace version") == 0);
    CHECK(parse_error("# viaduct-trace 1\n# rank 2 size 2 clock_monotonic_ns 0 "
                      "clock_realtime_ns 0\n")
              .find("t:2: rank 2 out of range") == 0);
    CHECK(parse_error(kHead0 + rec).find("t:4: truncated: no '# end records' line") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,100,eager,20").find("t:4: expected 9") == 0);
    CHECK(parse_error(kHead0 + "0,send,5,7,100,eager,2000,2500,0\n").find("t:4: peer 5 out") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,1x0,eager,2000,2500,0\n")
              .find("t:4: bytes '1x0' is not a number") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,1000000000000000,eager,2000,2500,0\n")
              .find("t:4: bytes 1000000000000000 out of range") == 0);  // 1 PB
    CHECK(parse_error(kHead0 + "0,send,1,7,100,eager,1e300,2500,0\n")
              .find("t:4: post_ns '1e300' is not a number") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,100,eager,nan,2500,0\n")
              .find("t:4: post_ns 'nan' is not a number") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,100,eager,500,2500,0\n")
              .find("t:4: post_ns 500 out of range") == 0);  // before the file's start
    CHECK(parse_error(kHead0 + "0,send,1,7,100,carrier,2000,2500,0\n")
              .find("t:4: unknown protocol 'carrier'") == 0);
    CHECK(parse_error(kHead0 + "0,send,1,7,100,eager,2000,1500,0\n")
              .find("t:4: done_ns 1500 out of range") == 0);
    CHECK(parse_error(kHead0 + "1,send,1,7,100,eager,2000,2500,0\n")
              .find("t:4: record of rank 1 in the file of rank 0") == 0);
    CHECK(parse_error(kHead0 + rec + "# end records 2 dropped 0\n")
              .find("t:5: the end line counts 2 records, the file has 1") == 0);
    CHECK(parse_error(kHead0 + rec + "# end records 1 dropped 0\nmore\n")
              .find("t:6: text after the end line") == 0);
    CHECK(parse_error(kHead0 + std::string(5000, 'x') + "\n").find("t:4: line longer") == 0);
}

TEST_CASE("a cut-short trace file is refused by name", "[replay]") {
    const std::string path = std::string(SANSIM_TEST_DIR) + "/replay/truncated.0.csv";
    try {
        load_traces(path);
        FAIL("the truncated trace was accepted");
    } catch (const TraceError &e) {
        CHECK(std::string(e.what()) == path + ":5: expected 9 comma-separated fields, found 7");
    }
}

TEST_CASE("a job's trace files must fit together", "[replay]") {
    const std::string one = rank_file(0, "", 0);
    CHECK_THROWS_WITH(load_traces(write_job("missing", {one})),
                      Catch::Contains("no trace of rank 1 of 2"));
    CHECK_THROWS_WITH(load_traces(write_job("twice", {one, one})), Catch::Contains("rank 0 again"));
    CHECK_THROWS_WITH(load_traces("/nonexistent/trace.*"), Catch::Contains("no trace files"));
}

TEST_CASE("a replayed send waits for the completions recorded before it", "[replay]") {
    // One 1 MB message 0 -> 1, posted 1 us into the trace; it takes `move` in the replay.
    const std::string msg = "0,send,1,1,1000000,rdma_read,1000,2000,0\n";
    const ReplaySummary alone =
        replay(write_job("alone", {rank_file(0, msg, 1),
                                   rank_file(1, "1,recv,0,1,1000000,rdma_read,0,2000,0\n", 1)}));
    const double move = alone.predicted_us - 1.0;
    REQUIRE(move > 100);  // ServerNet I: tens of ms for 1 MB
    CHECK(alone.recorded_us == Approx(2.0));

    // Rank 1 answers 500 ns after its receive completed: the answer cannot start before the
    // first message has arrived in the replay (1 + move), then waits out the recorded gap.
    const std::string r1 =
        "1,recv,0,1,1000000,rdma_read,0,2000,0\n"
        "1,send,0,2,1000000,rdma_read,2500,3500,0\n";
    const std::string r0 = msg + "0,recv,1,2,1000000,rdma_read,1500,3500,0\n";
    const ReplaySummary chain =
        replay(write_job("chain", {rank_file(0, r0, 2), rank_file(1, r1, 2)}));
    CHECK(chain.messages == 2);
    CHECK(chain.unmatched_receives == 0);
    CHECK(chain.predicted_us == Approx(1.0 + move + 0.5 + move).margin(1e-3));

    // Without the receive in rank 1's file the answer depends on nothing and overlaps.
    const ReplaySummary free_run =
        replay(write_job("free", {rank_file(0, msg, 1),
                                  rank_file(1, "1,send,0,2,1000000,rdma_read,2500,3500,0\n", 1)}));
    CHECK(free_run.predicted_us < 0.9 * chain.predicted_us);
}

TEST_CASE("a receive that matched no message is skipped, not refused", "[replay]") {
    // libmsg writes receives withdrawn at finalize with the wildcards they were posted with.
    const std::string sent = "0,send,1,7,100,eager,2000,2500,0\n";
    const RankTrace t = parse_rank_trace(kHead0 + sent +
                                             "0,recv,-1,-1,0,eager,2000,9000,-14\n"
                                             "0,recv,1,-1,0,eager,2100,9000,-14\n"
                                             "0,recv,-1,5,0,send_recv,2200,9000,-5\n"
                                             "# end records 4 dropped 0\n",
                                         "t");
    CHECK(t.ops.size() == 1);
    CHECK(t.withdrawn == 3);
    CHECK(parse_error(kHead0 + "0,recv,-1,5,100,eager,2000,2500,0\n")
              .find("t:4: a completed receive with peer -1 tag 5") == 0);
    CHECK(parse_error(kHead0 + "0,send,-1,5,100,eager,2000,2500,-14\n")
              .find("t:4: a send to peer -1 tag 5: only a receive") == 0);
    CHECK(parse_error(kHead0 + "0,recv,-2,5,100,eager,2000,2500,-14\n")
              .find("t:4: peer -2 out of range") == 0);
    CHECK(parse_error(kHead0 + sent +
                      "0,recv,-1,-1,0,eager,2000,9000,-14\n"
                      "# end records 1 dropped 0\n")
              .find("t:6: the end line counts 1 records, the file has 2") == 0);
}

TEST_CASE("a directory's files other than traces are left out", "[replay]") {
    const std::string dir =
        write_job("mixed", {rank_file(0, "0,send,1,1,1000,eager,1000,2000,0\n", 1),
                            rank_file(1,
                                      "1,recv,0,1,1000,eager,0,2000,0\n"
                                      "1,recv,-1,-1,0,eager,0,2500,-14\n",
                                      2)});
    // What a sort leaves beside its traces: inputs, outputs, a log, a writer's temporary.
    std::ofstream(dir + "/in.0") << std::string(100, '\x01');
    std::ofstream(dir + "/out.0") << "";
    std::ofstream(dir + "/sort.log") << "sorted\n";
    std::ofstream(dir + "/t.2.csv.tmp123") << "# viaduct-trace 1\n";
    std::ofstream(dir + "/.t.2.csv.Ab12Cd") << "# viaduct-trace 1\n";
    const std::vector<RankTrace> traces = load_traces(dir);
    REQUIRE(traces.size() == 2);
    CHECK(traces[1].withdrawn == 1);
    CHECK(replay(dir).messages == 1);

    const auto empty = std::filesystem::temp_directory_path() / "sansim-replay-none";
    std::filesystem::remove_all(empty);
    std::filesystem::create_directories(empty);
    std::ofstream(empty / "in.0") << "data";
    CHECK_THROWS_WITH(
        load_traces(empty.string()),
        Catch::Contains("no viaduct trace among its 1 files") && Catch::Contains("in.0"));
}

TEST_CASE("a real sort's traces replay", "[replay]") {
    // `VIADUCT_TRACE=DIR/trace.%r sortapp run -n 2` on 2 x 100,000 records: two nodes and the
    // monitor; report.txt is the sort's own report, left beside the traces as a user would.
    const std::string dir = std::string(SANSIM_TEST_DIR) + "/replay/sort2";
    const std::vector<RankTrace> traces = load_traces(dir);
    REQUIRE(traces.size() == 3);
    std::uint64_t sends = 0, withdrawn = 0;
    for (const RankTrace &t : traces) {
        withdrawn += t.withdrawn;
        for (const TraceOp &o : t.ops) sends += o.send && o.status == 0 && o.peer != t.rank;
    }
    CHECK(withdrawn > 0);  // the wildcard receives cancelled at finalize
    WorkloadOptions w;
    w.kind = "replay";
    w.replay_path = dir;
    const Results r = run_simulation(make_topology("crossbar:3", 1), Params{}, w, 0);
    CHECK(r.complete);
    CHECK(r.replay.ranks == 3);
    CHECK(r.replay.messages == sends);
    CHECK(r.replay.unmatched_receives == 0);
    // Phase 3b moves half of each node's 10 MB to the other node.
    CHECK(r.replay.bytes > 9'900'000);
    CHECK(r.replay.predicted_us >= r.replay.recorded_us * 0.5);
}
