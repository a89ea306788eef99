// Byte encoding of the monitor's and nodes' messages: little-endian integers
// and length-prefixed strings. A reader never trusts a length: it fails (and
// stays failed) on anything that would read past the message. Encoder and
// Decoder walk a message's field list (messages.hpp) with these.
#pragma once

#include <cstdint>
#include <cstring>
#include <ranges>
#include <string>
#include <vector>

#include "wire.hpp"

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

// A field list's type, as its fields go on the wire:
//   uint32_t, uint64_t, double   4, 8, 8 bytes, little-endian
//   std::string                  u64 length, then the bytes
//   uint8_t                      a flag, sent as a u32; any non-zero u32 reads as 1
//   std::vector<T>, wire::Zip    u64 count, then each entry
//   a struct                     its own field list (a `fields` function)
template <typename T, typename Visitor>
concept HasFields = requires(T &m, Visitor &v) {
    fields(m, v);
};

// The fewest bytes a T takes on the wire: what a count of Ts in a message is checked against.
class Measure {
  public:
    template <typename... T>
    void operator()(T &&...v) {
        (add(v), ...);
    }
    template <typename T>
    static size_t min_size() {
        T empty{};
        Measure m;
        m.add(empty);
        return m.bytes_;
    }

  private:
    void add(uint32_t) { bytes_ += 4; }
    void add(uint64_t) { bytes_ += 8; }
    void add(double) { bytes_ += 8; }
    void add(uint8_t) { bytes_ += 4; }
    void add(const std::string &) { bytes_ += 8; }
    template <typename T>
    void add(const std::vector<T> &) {
        bytes_ += 8;
    }
    template <typename A, typename B>
    void add(const wire::Zip<A, B> &) {
        bytes_ += 8;
    }
    template <typename T>
    requires HasFields<T, Measure>
    void add(T &m) { fields(m, *this); }
    size_t bytes_ = 0;
};

class Encoder {
  public:
    explicit Encoder(Writer &w) : w_(w) {}
    template <typename... T>
    void operator()(T &&...v) {
        (put(v), ...);
    }

  private:
    void put(uint32_t v) { w_.u32(v); }
    void put(uint64_t v) { w_.u64(v); }
    void put(double v) { w_.f64(v); }
    void put(uint8_t flag) { w_.u32(flag); }
    void put(const std::string &s) { w_.str(s); }
    template <typename T>
    void put(const std::vector<T> &v) {
        w_.u64(v.size());
        for (const T &x : v) put(x);
    }
    template <typename A, typename B>
    void put(const wire::Zip<A, B> &z) {
        w_.u64(z.first.size());
        for (size_t j = 0; j < z.first.size(); ++j) {
            put(z.first[j]);
            put(j < z.second.size() ? z.second[j] : std::ranges::range_value_t<B>{});
        }
    }
    template <typename T>
    requires HasFields<const T, Encoder>
    void put(const T &m) { fields(m, *this); }
    Writer &w_;
};

class Decoder {
  public:
    explicit Decoder(Reader &r) : r_(r) {}
    template <typename... T>
    void operator()(T &&...v) {
        (get(v), ...);
    }

  private:
    void get(uint32_t &v) { v = r_.u32(); }
    void get(uint64_t &v) { v = r_.u64(); }
    void get(double &v) { v = r_.f64(); }
    void get(uint8_t &flag) { flag = static_cast<uint8_t>(r_.u32() != 0); }
    void get(std::string &s) { s = r_.str(); }
    template <typename T>
    void get(std::vector<T> &v) {
        v.resize(r_.count(Measure::min_size<T>()));
        for (T &x : v) get(x);
    }
    template <typename A, typename B>
    void get(const wire::Zip<A, B> &z) {
        using First = std::ranges::range_value_t<A>;
        using Second = std::ranges::range_value_t<B>;
        const uint64_t n = r_.count(Measure::min_size<First>() + Measure::min_size<Second>());
        z.first.resize(n);
        z.second.resize(n);
        for (uint64_t j = 0; j < n; ++j) {
            get(z.first[j]);
            get(z.second[j]);
        }
    }
    template <typename T>
    requires HasFields<T, Decoder>
    void get(T &m) { fields(m, *this); }
    Reader &r_;
};

}  // namespace sortapp::cluster
