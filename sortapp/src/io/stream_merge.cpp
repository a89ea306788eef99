// The k-way merge loop (see stream_merge.hpp). Streams compare by their 8-byte key prefix
// first, and by the rest of the key only on equal prefixes.
#include "sortapp/stream_merge.hpp"

#include <cstring>

#include "sortapp/loser_tree.hpp"

namespace sortapp {

Status merge_streams(const RecordFormat &format, const RecordStreams &streams,
                     SequentialWriter &writer, std::uint64_t report_every,
                     const std::function<void(std::uint64_t)> &progress, std::uint64_t &merged) {
    const std::size_t rs = format.record_size, ks = format.key_size, k = streams.size();
    std::vector<RecordStream *> raw;
    for (const auto &p : streams) raw.push_back(p.get());
    RecordStream *const *s = raw.data();
    auto less = [s, ks](std::size_t a, std::size_t b) {
        if (s[a]->prefix() != s[b]->prefix()) return s[a]->prefix() < s[b]->prefix();
        return ks > 8 && std::memcmp(s[a]->record() + 8, s[b]->record() + 8, ks - 8) < 0;
    };
    auto exhausted = [s](std::size_t a) { return s[a]->record() == nullptr; };
    LoserTree tree(k, less, exhausted);
    merged = 0;
    std::uint64_t since_report = 0;
    for (std::size_t w; (w = tree.winner()) < k;) {
        SORTAPP_TRY(writer.append(s[w]->record(), rs));
        SORTAPP_TRY(s[w]->advance());
        tree.replay();
        merged += rs;
        since_report += rs;
        if (since_report >= report_every) {
            since_report = 0;
            if (progress) progress(merged);
        }
    }
    return Status::ok();
}

}  // namespace sortapp
