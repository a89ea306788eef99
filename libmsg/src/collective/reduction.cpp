// The built-in reductions (sum, min, max, band, bor) over the six element
// types, and the dispatch to a caller's function.
#include "collective/reduction.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace msg {

namespace {

template <typename T, typename F>
void combine(const void *in, void *inout, size_t count, F f) {
    const T *a = static_cast<const T *>(in);
    T *b = static_cast<T *>(inout);
    for (size_t i = 0; i < count; ++i) b[i] = f(a[i], b[i]);
}

template <typename T>
void apply_typed(int op, const void *in, void *inout, size_t count) {
    switch (op) {
        case MSG_SUM:
            combine<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x + y); });
            break;
        case MSG_MIN:
            combine<T>(in, inout, count, [](T x, T y) { return std::min(x, y); });
            break;
        case MSG_MAX:
            combine<T>(in, inout, count, [](T x, T y) { return std::max(x, y); });
            break;
        default:
            if constexpr (std::is_integral_v<T>) {
                if (op == MSG_BAND)
                    combine<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x & y); });
                else
                    combine<T>(in, inout, count, [](T x, T y) { return static_cast<T>(x | y); });
            }
            break;
    }
}

}  // namespace

size_t datatype_size(int datatype) {
    switch (datatype) {
        case MSG_INT32:
        case MSG_UINT32:
        case MSG_FLOAT:
            return 4;
        case MSG_INT64:
        case MSG_UINT64:
        case MSG_DOUBLE:
            return 8;
        default:
            return 0;
    }
}

int check_builtin(int datatype, int op) {
    if (datatype_size(datatype) == 0) return MSG_ERR_INVALID_ARG;
    if (op < MSG_SUM || op > MSG_BOR) return MSG_ERR_INVALID_ARG;
    const bool floating = datatype == MSG_FLOAT || datatype == MSG_DOUBLE;
    if (floating && (op == MSG_BAND || op == MSG_BOR)) return MSG_ERR_INVALID_ARG;
    return MSG_OK;
}

size_t Reduction::element_size() const {
    return datatype_size(datatype);
}

void Reduction::apply(const void *in, void *inout, size_t count) const {
    if (fn != nullptr) {
        fn(in, inout, count, arg);
        return;
    }
    switch (datatype) {
        case MSG_INT32:
            apply_typed<int32_t>(op, in, inout, count);
            break;
        case MSG_INT64:
            apply_typed<int64_t>(op, in, inout, count);
            break;
        case MSG_UINT32:
            apply_typed<uint32_t>(op, in, inout, count);
            break;
        case MSG_UINT64:
            apply_typed<uint64_t>(op, in, inout, count);
            break;
        case MSG_FLOAT:
            apply_typed<float>(op, in, inout, count);
            break;
        case MSG_DOUBLE:
            apply_typed<double>(op, in, inout, count);
            break;
        default:
            break;
    }
}

}  // namespace msg
