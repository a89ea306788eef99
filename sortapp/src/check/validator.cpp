// Validation of sorted output: order, duplicates and the checksum, combinable across files.
#include "sortapp/validator.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sortapp {

namespace {

std::string to_hex(const std::vector<std::uint8_t> &bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (std::uint8_t b : bytes) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s.empty() ? "-" : s;
}

bool from_hex(const std::string &text, std::vector<std::uint8_t> &out) {
    out.clear();
    if (text == "-") return true;
    if (text.size() % 2 != 0) return false;
    for (std::size_t i = 0; i < text.size(); i += 2) {
        unsigned v;
        if (std::sscanf(text.c_str() + i, "%2x", &v) != 1) return false;
        out.push_back(std::uint8_t(v));
    }
    return true;
}

}  // namespace

void Summary::append(const Summary &next) {
    if (next.records == 0) return;
    if (records == 0) {
        *this = next;
        return;
    }
    int cmp = std::memcmp(last_key.data(), next.first_key.data(),
                          std::min(last_key.size(), next.first_key.size()));
    if (cmp > 0) {
        ++unordered;
        if (!first_unordered) first_unordered = records;
    } else if (cmp == 0) {
        ++duplicate_keys;
    }
    if (!first_unordered && next.first_unordered) first_unordered = records + *next.first_unordered;
    unordered += next.unordered;
    duplicate_keys += next.duplicate_keys;
    checksum.add(next.checksum);
    records += next.records;
    last_key = next.last_key;
}

std::string Summary::to_text() const {
    std::ostringstream s;
    s << "sortcheck-summary records=" << records
      << " first_unordered=" << (first_unordered ? std::to_string(*first_unordered) : "-")
      << " unordered=" << unordered << " duplicate_keys=" << duplicate_keys
      << " checksum=" << checksum.hex() << " first_key=" << to_hex(first_key)
      << " last_key=" << to_hex(last_key) << "\n";
    return s.str();
}

Status Summary::from_text(const std::string &text, Summary &out) {
    std::istringstream in(text);
    std::string word;
    in >> word;
    if (word != "sortcheck-summary") return Status::error("not a sortcheck summary");
    Summary s;
    int seen = 0;
    while (in >> word) {
        auto eq = word.find('=');
        if (eq == std::string::npos) return Status::error("bad summary field '" + word + "'");
        std::string name = word.substr(0, eq), value = word.substr(eq + 1);
        bool ok = true;
        try {
            if (name == "records")
                s.records = std::stoull(value);
            else if (name == "first_unordered") {
                if (value != "-") s.first_unordered = std::stoull(value);
            } else if (name == "unordered")
                s.unordered = std::stoull(value);
            else if (name == "duplicate_keys")
                s.duplicate_keys = std::stoull(value);
            else if (name == "checksum")
                ok = Checksum::parse_hex(value, s.checksum);
            else if (name == "first_key")
                ok = from_hex(value, s.first_key);
            else if (name == "last_key")
                ok = from_hex(value, s.last_key);
            else
                continue;
        } catch (const std::exception &) {
            ok = false;
        }
        if (!ok) return Status::error("bad summary field '" + word + "'");
        ++seen;
    }
    if (seen != 7) return Status::error("incomplete sortcheck summary");
    if ((s.records == 0) != s.first_key.empty() || s.first_key.size() != s.last_key.size()) {
        return Status::error("inconsistent sortcheck summary");
    }
    out = s;
    return Status::ok();
}

std::string Summary::to_json() const {
    nlohmann::ordered_json j = {{"records", records}, {"sorted", sorted()}};
    j["first_unordered"] = first_unordered ? nlohmann::ordered_json(*first_unordered) : nullptr;
    j["unordered"] = unordered;
    j["duplicate_keys"] = duplicate_keys;
    j["checksum"] = checksum.hex();
    return j.dump();
}

void Validator::add(const std::uint8_t *records, std::size_t count) {
    const std::size_t rs = format_.record_size, ks = format_.key_size;
    Summary &s = summary_;
    if (count == 0) return;
    const std::uint8_t *prev = s.records > 0 ? s.last_key.data() : nullptr;
    if (s.records == 0) s.first_key.assign(records, records + ks);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint8_t *rec = records + i * rs;
        if (prev != nullptr) {
            int cmp = std::memcmp(prev, rec, ks);
            if (cmp > 0) {
                ++s.unordered;
                if (!s.first_unordered) s.first_unordered = s.records + i;
            } else if (cmp == 0) {
                ++s.duplicate_keys;
            }
        }
        s.checksum.add(record_crc32(rec, rs));
        prev = rec;
    }
    s.records += count;
    s.last_key.assign(prev, prev + ks);
}

Status validate_file(const RecordFormat &format, const std::string &path, Summary &out,
                     const ValidateProgress &progress) {
    SORTAPP_TRY(format.validate());
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::from_errno("cannot open " + path, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return Status::from_errno("cannot stat " + path, err);
    }
    if (std::uint64_t(st.st_size) % format.record_size != 0) {
        ::close(fd);
        return Status::error(path + ": size " + std::to_string(st.st_size) +
                             " bytes is not a multiple of the record size (" +
                             std::to_string(format.record_size) + " bytes)");
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    Validator v(format);
    const std::size_t chunk =
        std::max<std::size_t>(1, (8u << 20) / format.record_size) * format.record_size;
    std::vector<std::uint8_t> buffer(chunk);
    std::size_t filled = 0;
    std::uint64_t read_so_far = 0;
    Status status;
    for (;;) {
        ssize_t r = ::read(fd, buffer.data() + filled, chunk - filled);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            status = Status::from_errno("reading " + path, errno);
            break;
        }
        filled += std::size_t(r);
        read_so_far += std::uint64_t(r);
        if (progress) progress(read_so_far);
        if (filled == chunk || r == 0) {
            std::size_t whole = filled / format.record_size;
            v.add(buffer.data(), whole);
            if (r == 0 && filled % format.record_size != 0) {
                status = Status::error(path + ": changed size while being read");
            }
            filled = 0;
        }
        if (r == 0) break;
    }
    ::close(fd);
    if (status) out = v.summary();
    return status;
}

}  // namespace sortapp
