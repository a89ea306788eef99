// Byte encoding of the monitor's and nodes' messages: little-endian integers
// and length-prefixed strings. A reader never trusts a length: it fails (and
// stays failed) on anything that would read past the message.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sortapp::cluster {

class Writer {
  public:
    void u32(uint32_t v) { put(&v, 4); }
    void u64(uint64_t v) { put(&v, 8); }
    void f64(double v) { put(&v, 8); }
    void str(const std::string &s) {
        u64(s.size());
        put(s.data(), s.size());
    }
    const std::vector<char> &bytes() const { return buf_; }

  private:
    void put(const void *p, size_t n) {
        if (n == 0) return;
        size_t at = buf_.size();
        buf_.resize(at + n);
        std::memcpy(buf_.data() + at, p, n);
    }
    std::vector<char> buf_;
};

class Reader {
  public:
    Reader(const void *data, size_t len) : p_(static_cast<const char *>(data)), left_(len) {}
    uint32_t u32() {
        uint32_t v = 0;
        get(&v, 4);
        return v;
    }
    uint64_t u64() {
        uint64_t v = 0;
        get(&v, 8);
        return v;
    }
    double f64() {
        double v = 0;
        get(&v, 8);
        return v;
    }
    std::string str() {
        uint64_t n = u64();
        if (!ok_ || n > left_) {
            ok_ = false;
            return {};
        }
        std::string s(p_, n);
        p_ += n;
        left_ -= n;
        return s;
    }
    // A count of items each at least min_item bytes long that the message can still hold.
    uint64_t count(size_t min_item) {
        uint64_t n = u64();
        if (!ok_ || (min_item > 0 && n > left_ / min_item)) ok_ = false;
        return ok_ ? n : 0;
    }
    bool ok() const { return ok_; }
    bool finished() const { return ok_ && left_ == 0; }

  private:
    void get(void *out, size_t n) {
        if (!ok_ || n > left_) {
            ok_ = false;
            return;
        }
        std::memcpy(out, p_, n);
        p_ += n;
        left_ -= n;
    }
    const char *p_;
    size_t left_;
    bool ok_ = true;
};

}  // namespace sortapp::cluster
