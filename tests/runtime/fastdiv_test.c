/*
** tests/runtime/fastdiv_test.c: runtime/stnfastdiv.h's division by a multiply and a shift
** against the C operator, on the host (the device computes the same product with __umulhi).
** Every divisor 1..4096 with every dividend 0..65535 and the dividends near multiples of the
** divisor up to 2^31 - 1, then random pairs and the extremes. Prints one line; exit 1 on a miss.
*/
#include "stnfastdiv.h"

#include <stdio.h>
#include <stdlib.h>

static long checked, missed;

static void check(int n, int d, StnFastDiv f)
{
  const int got = StnFastDivide(n, f);
  checked++;
  if (got != n / d && missed++ < 10) printf("FAIL: fastdiv: %d / %d gave %d, not %d\n", n, d, got, n / d);
}

int main(void)
{
  unsigned long long r = 88172645463325252ull; /* xorshift64 */
  for (int d = 1; d <= 4096; d++) {
    const StnFastDiv f = StnFastDivMake(d);
    for (int n = 0; n < 65536; n++) check(n, d, f);
    for (long long q = 1; q * d < 2147483647LL; q = q * 3 + 1) /* around multiples of d, to 2^31 - 1 */
      for (int e = -1; e <= 1; e++) {
        const long long n = q * d + e;
        if (n >= 0 && n <= 2147483647LL) check((int)n, d, f);
      }
    check(2147483647, d, f);
  }
  for (int i = 0; i < 5000000; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    const int d = (int)(r % 2147483646u) + 1, n = (int)((r >> 31) % 2147483648u);
    check(n, d, StnFastDivMake(d));
    check(n, (int)(r % 100000u) + 1, StnFastDivMake((int)(r % 100000u) + 1));
  }
  check(2147483647, 2147483647, StnFastDivMake(2147483647));
  check(2147483646, 2147483647, StnFastDivMake(2147483647));
  check(2147483647, 1073741825, StnFastDivMake(1073741825));
  if (missed) {
    printf("FAIL: fastdiv: %ld of %ld quotients wrong\n", missed, checked);
    return 1;
  }
  printf("fastdiv: %ld quotients = the C operator's: ok\n", checked);
  return 0;
}
