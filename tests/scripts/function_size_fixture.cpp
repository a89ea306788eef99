// A fixture for scripts/function-size-check.py (tests/scripts/function_size_check_test.py):
// eighty_lines has a body of exactly 80 lines, Holder::eighty_one_lines one of 81. The
// table, the strings and the comments hold braces that belong to no function.
namespace fixture {

int eighty_lines(int x) {
    x += 0;
    x += 1;
    x += 2;
    x += 3;
    x += 4;
    x += 5;
    x += 6;
    x += 7;
    x += 8;
    x += 9;
    x += 10;
    x += 11;
    x += 12;
    x += 13;
    x += 14;
    x += 15;
    x += 16;
    x += 17;
    x += 18;
    x += 19;
    x += 20;
    x += 21;
    x += 22;
    x += 23;
    x += 24;
    x += 25;
    x += 26;
    x += 27;
    x += 28;
    x += 29;
    x += 30;
    x += 31;
    x += 32;
    x += 33;
    x += 34;
    x += 35;
    x += 36;
    x += 37;
    x += 38;
    x += 39;
    x += 40;
    x += 41;
    x += 42;
    x += 43;
    x += 44;
    x += 45;
    x += 46;
    x += 47;
    x += 48;
    x += 49;
    x += 50;
    x += 51;
    x += 52;
    x += 53;
    x += 54;
    x += 55;
    x += 56;
    x += 57;
    x += 58;
    x += 59;
    x += 60;
    x += 61;
    x += 62;
    x += 63;
    x += 64;
    x += 65;
    x += 66;
    x += 67;
    x += 68;
    x += 69;
    x += 70;
    x += 71;
    x += 72;
    x += 73;
    x += 74;
    x += 75;
    x += 76;
    return x;
}

class Holder {
  public:
    int eighty_one_lines(int x) {
        const char *open = "{{{ not a brace";  // nor this: {
        x += 0;
        x += 1;
        x += 2;
        x += 3;
        x += 4;
        x += 5;
        x += 6;
        x += 7;
        x += 8;
        x += 9;
        x += 10;
        x += 11;
        x += 12;
        x += 13;
        x += 14;
        x += 15;
        x += 16;
        x += 17;
        x += 18;
        x += 19;
        x += 20;
        x += 21;
        x += 22;
        x += 23;
        x += 24;
        x += 25;
        x += 26;
        x += 27;
        x += 28;
        x += 29;
        x += 30;
        x += 31;
        x += 32;
        x += 33;
        x += 34;
        x += 35;
        x += 36;
        x += 37;
        x += 38;
        x += 39;
        x += 40;
        x += 41;
        x += 42;
        x += 43;
        x += 44;
        x += 45;
        x += 46;
        x += 47;
        x += 48;
        x += 49;
        x += 50;
        x += 51;
        x += 52;
        x += 53;
        x += 54;
        x += 55;
        x += 56;
        x += 57;
        x += 58;
        x += 59;
        x += 60;
        x += 61;
        x += 62;
        x += 63;
        x += 64;
        x += 65;
        x += 66;
        x += 67;
        x += 68;
        x += 69;
        x += 70;
        x += 71;
        x += 72;
        x += 73;
        x += 74;
        x += 75;
        x += 76;
        return x + open[0];
    }
};

/* { a comment that opens a brace */
// clang-format off
const int table[] = {
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    16,
    17,
    18,
    19,
    20,
    21,
    22,
    23,
    24,
    25,
    26,
    27,
    28,
    29,
    30,
    31,
    32,
    33,
    34,
    35,
    36,
    37,
    38,
    39,
    40,
    41,
    42,
    43,
    44,
    45,
    46,
    47,
    48,
    49,
    50,
    51,
    52,
    53,
    54,
    55,
    56,
    57,
    58,
    59,
    60,
    61,
    62,
    63,
    64,
    65,
    66,
    67,
    68,
    69,
    70,
    71,
    72,
    73,
    74,
    75,
    76,
    77,
    78,
    79,
    80,
    81,
    82,
    83,
    84,
    85,
    86,
    87,
    88,
    89,
};
// clang-format on

}  // namespace fixture
