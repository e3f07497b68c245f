// Hardware truth for float->int casts, min/max signed zeros, NaN payloads, int->float
// rounding, double->narrow float rounding. Prints one line per probe.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define NV 40
__device__ __managed__ int dummy;

template <typename F>
__global__ void casts(const F* in, long long* out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  F x = in[i];
  long long* o = out + i * 16;
  o[0] = (long long)(signed char)x;
  o[1] = (long long)(short)x;
  o[2] = (long long)(int)x;
  o[3] = (long long)x;
  o[4] = (long long)(unsigned char)x;
  o[5] = (long long)(unsigned short)x;
  o[6] = (long long)(unsigned int)x;
  o[7] = (long long)(unsigned long long)x;
  o[8] = (long long)(bool)x;
}

template <typename F>
__global__ void intrinsics(const F* in, long long* out, int n);

template <>
__global__ void intrinsics<float>(const float* in, long long* out, int n) {
  int i = threadIdx.x; if (i >= n) return; float x = in[i]; long long* o = out + i * 16;
  o[0] = __float2int_rz(x); o[1] = (long long)__float2uint_rz(x);
  o[2] = __float2ll_rz(x); o[3] = (long long)__float2ull_rz(x);
}
template <>
__global__ void intrinsics<double>(const double* in, long long* out, int n) {
  int i = threadIdx.x; if (i >= n) return; double x = in[i]; long long* o = out + i * 16;
  o[0] = __double2int_rz(x); o[1] = (long long)__double2uint_rz(x);
  o[2] = __double2ll_rz(x); o[3] = (long long)__double2ull_rz(x);
}

__global__ void halfcasts(const float* in, long long* out, int n) {
  int i = threadIdx.x; if (i >= n) return; long long* o = out + i * 16;
  __half h = __float2half_rn(in[i]);
  __nv_bfloat16 b = __float2bfloat16_rn(in[i]);
  o[0] = (long long)(signed char)(float)h; o[1] = (long long)(short)(float)h; o[2] = (int)(float)h;
  o[3] = (long long)(float)h; o[4] = (unsigned char)(float)h; o[5] = (unsigned short)(float)h;
  o[6] = (unsigned)(float)h; o[7] = (long long)(unsigned long long)(float)h;
  o[8] = __half2int_rz(h); o[9] = __half2short_rz(h); o[10] = __half2ushort_rz(h);
  o[11] = __half2uint_rz(h); o[12] = __half2ll_rz(h); o[13] = (long long)__half2ull_rz(h);
  o[14] = __bfloat162int_rz(b); o[15] = (long long)__bfloat162uint_rz(b);
}

__global__ void minmax(const float* a, const float* b, unsigned* out) {
  float x = a[0], y = b[0];
  double dx = x, dy = y;
  __half hx = __float2half(x), hy = __float2half(y);
  __nv_bfloat16 bx = __float2bfloat16(x), by = __float2bfloat16(y);
  float r[12] = {fmaxf(x, y), fminf(x, y), max(x, y), min(x, y),
                 (float)fmax(dx, dy), (float)fmin(dx, dy),
                 __half2float(__hmax(hx, hy)), __half2float(__hmin(hx, hy)),
                 __bfloat162float(__hmax(bx, by)), __bfloat162float(__hmin(bx, by)),
                 x > y ? x : y, x < y ? x : y};
  for (int k = 0; k < 12; ++k) { unsigned u; memcpy(&u, &r[k], 4); out[k] = u; }
}

__global__ void nanconv(const unsigned* bits, unsigned* out, int n) {
  int i = threadIdx.x; if (i >= n) return; float f; memcpy(&f, &bits[i], 4);
  __nv_bfloat16 b = __float2bfloat16(f), b2 = __float2bfloat16_rn(f), b3 = __float2bfloat16_rz(f);
  __half h = __float2half(f), h2 = __float2half_rn(f);
  double d = f;
  __nv_bfloat16 b4 = __double2bfloat16(d);
  __half h4 = __double2half(d);
  unsigned short u;
  memcpy(&u, &b, 2); out[i*8+0] = u; memcpy(&u, &b2, 2); out[i*8+1] = u;
  memcpy(&u, &b3, 2); out[i*8+2] = u; memcpy(&u, &h, 2); out[i*8+3] = u;
  memcpy(&u, &h2, 2); out[i*8+4] = u; memcpy(&u, &b4, 2); out[i*8+5] = u;
  memcpy(&u, &h4, 2); out[i*8+6] = u;
  float back = __bfloat162float(b); unsigned ub; memcpy(&ub, &back, 4); out[i*8+7] = ub;
}

__global__ void int2float(const unsigned long long* in, unsigned long long* out, int n) {
  int i = threadIdx.x; if (i >= n) return; unsigned long long u = in[i]; long long s = (long long)u;
  float a = (float)u, b = (float)s; double c = (double)u, d = (double)s;
  __half h1 = __ull2half_rn(u), h2 = __ll2half_rn(s);
  __nv_bfloat16 b1 = __ull2bfloat16_rn(u), b2 = __ll2bfloat16_rn(s);
  unsigned ua, ub; memcpy(&ua, &a, 4); memcpy(&ub, &b, 4);
  unsigned long long uc, ud; memcpy(&uc, &c, 8); memcpy(&ud, &d, 8);
  unsigned short s1, s2, s3, s4; memcpy(&s1, &h1, 2); memcpy(&s2, &h2, 2); memcpy(&s3, &b1, 2); memcpy(&s4, &b2, 2);
  unsigned long long* o = out + i * 8;
  o[0] = ua; o[1] = ub; o[2] = uc; o[3] = ud; o[4] = s1; o[5] = s2; o[6] = s3; o[7] = s4;
}

__global__ void dbl2narrow(const double* in, unsigned* out, int n) {
  int i = threadIdx.x; if (i >= n) return; double d = in[i];
  float f = (float)d; __half h = __double2half(d); __nv_bfloat16 b = __double2bfloat16(d);
  __nv_bfloat16 bf = __float2bfloat16((float)d); __half hf = __float2half((float)d);
  unsigned u; memcpy(&u, &f, 4); out[i*5] = u; unsigned short s;
  memcpy(&s, &h, 2); out[i*5+1] = s; memcpy(&s, &b, 2); out[i*5+2] = s;
  memcpy(&s, &bf, 2); out[i*5+3] = s; memcpy(&s, &hf, 2); out[i*5+4] = s;
}

static const double VALS[] = {0.5, -0.5, 1.5, -1.5, -0.0, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0,
  32767.5, 32768.0, -32769.0, 65535.5, 65536.0, 2147483647.5, 2147483648.0, -2147483649.0, 3e9, -3e9,
  4294967295.5, 4294967296.0, 9223372036854775808.0, -9223372036854775808.0, 9.3e18, 1e19, -1e19, 1.5e19,
  18446744073709551616.0, 18446744073709559808.0, 1e30, -1e30, 1e300, 1.0/0.0, -1.0/0.0, 0.0/0.0, -1e-40, 65504.0, 70000.0};

int main() {
  int n = sizeof(VALS) / sizeof(VALS[0]);
  double* dd; float* df; long long* dout; cudaMalloc(&dd, 8 * n); cudaMalloc(&df, 4 * n);
  cudaMalloc(&dout, 8 * 16 * n);
  float fv[64]; for (int i = 0; i < n; ++i) fv[i] = (float)VALS[i];
  cudaMemcpy(dd, VALS, 8 * n, cudaMemcpyHostToDevice); cudaMemcpy(df, fv, 4 * n, cudaMemcpyHostToDevice);
  long long h[16 * 64];
  const char* names[] = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"};
  for (int src = 0; src < 2; ++src) {
    cudaMemset(dout, 0, 8 * 16 * n);
    if (src == 0) casts<float><<<1, 64>>>(df, dout, n); else casts<double><<<1, 64>>>(dd, dout, n);
    cudaMemcpy(h, dout, 8 * 16 * n, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) { printf("ccast %s %.17g:", src ? "f64" : "f32", src ? VALS[i] : (double)fv[i]);
      for (int k = 0; k < 9; ++k) printf(" %s=%lld", names[k], k == 7 ? h[i*16+k] : h[i*16+k]); printf("\n"); }
    cudaMemset(dout, 0, 8 * 16 * n);
    if (src == 0) intrinsics<float><<<1, 64>>>(df, dout, n); else intrinsics<double><<<1, 64>>>(dd, dout, n);
    cudaMemcpy(h, dout, 8 * 16 * n, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) printf("intr %s %.17g: 2int_rz=%lld 2uint_rz=%lld 2ll_rz=%lld 2ull_rz=%llu\n", src ? "f64" : "f32",
      src ? VALS[i] : (double)fv[i], h[i*16], h[i*16+1], h[i*16+2], (unsigned long long)h[i*16+3]);
  }
  cudaMemset(dout, 0, 8 * 16 * n); halfcasts<<<1, 64>>>(df, dout, n); cudaMemcpy(h, dout, 8 * 16 * n, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) { printf("half %.17g:", (double)fv[i]); for (int k = 0; k < 16; ++k) printf(" %lld", h[i*16+k]); printf("\n"); }
  // min/max signed zeros and NaN
  float pairs[][2] = {{-0.0f, 0.0f}, {0.0f, -0.0f}, {-0.0f, -0.0f}, {0.0f / 0.0f, 1.0f}, {1.0f, 0.0f / 0.0f}};
  float *pa, *pb; unsigned* po; cudaMalloc(&pa, 4); cudaMalloc(&pb, 4); cudaMalloc(&po, 64);
  for (auto& p : pairs) { cudaMemcpy(pa, &p[0], 4, cudaMemcpyHostToDevice); cudaMemcpy(pb, &p[1], 4, cudaMemcpyHostToDevice);
    minmax<<<1, 1>>>(pa, pb, po); unsigned r[12]; cudaMemcpy(r, po, 48, cudaMemcpyDeviceToHost);
    printf("minmax %g %g: fmaxf=%08x fminf=%08x max=%08x min=%08x fmax=%08x fmin=%08x hmax=%08x hmin=%08x bhmax=%08x bhmin=%08x gt=%08x lt=%08x\n",
      p[0], p[1], r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]); }
  unsigned nb[] = {0x7F800001u, 0xFF800001u, 0x7F80FFFFu, 0x7FC00000u, 0x7F810000u, 0x7FFFFFFFu, 0xFFC00001u, 0x7F7FFFFFu, 0x7F7F8000u, 0x3F808000u, 0x3F818000u, 0x477FF000u};
  int nn = sizeof(nb) / 4; unsigned *dnb, *dno; cudaMalloc(&dnb, 64); cudaMalloc(&dno, 4 * 8 * nn);
  cudaMemcpy(dnb, nb, 4 * nn, cudaMemcpyHostToDevice); nanconv<<<1, 32>>>(dnb, dno, nn);
  unsigned no[8 * 16]; cudaMemcpy(no, dno, 4 * 8 * nn, cudaMemcpyDeviceToHost);
  for (int i = 0; i < nn; ++i) printf("nan %08x: f2bf=%04x f2bf_rn=%04x f2bf_rz=%04x f2h=%04x f2h_rn=%04x d2bf=%04x d2h=%04x bfback=%08x\n",
    nb[i], no[i*8], no[i*8+1], no[i*8+2], no[i*8+3], no[i*8+4], no[i*8+5], no[i*8+6], no[i*8+7]);
  unsigned long long iv[] = {0ull, 1ull, 16777217ull, (1ull << 63), (1ull << 63) + (1ull << 39) + 1, 0xFFFFFFFFFFFFFFFFull,
    (1ull << 63) + 1, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFF7FFFFFFFFFull, 0xFFFFFF8000000000ull, 9007199254740993ull,
    (1ull << 64 - 11) + (1ull << 10), 65520ull, 65519ull, 0xFFFFFFFFFFFF0000ull};
  int ni = sizeof(iv) / 8; unsigned long long *div, *dio; cudaMalloc(&div, 8 * ni); cudaMalloc(&dio, 64 * ni);
  cudaMemcpy(div, iv, 8 * ni, cudaMemcpyHostToDevice); int2float<<<1, 32>>>(div, dio, ni);
  unsigned long long io[8 * 32]; cudaMemcpy(io, dio, 64 * ni, cudaMemcpyDeviceToHost);
  for (int i = 0; i < ni; ++i) printf("i2f %llu: u2f=%08llx s2f=%08llx u2d=%016llx s2d=%016llx u2h=%04llx s2h=%04llx u2bf=%04llx s2bf=%04llx\n",
    iv[i], io[i*8], io[i*8+1], io[i*8+2], io[i*8+3], io[i*8+4], io[i*8+5], io[i*8+6], io[i*8+7]);
  double dv[] = {1.0 + 0x1p-24 + 0x1p-60, 1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-11 + 0x1p-50, 1.0 + 0x1p-9 + 0x1p-30,
    3.4028235677973366e38, 3.5e38, 65519.99, 65520.0, 1e-50, -1e-50, 5.9604644775390625e-08 * 0.5000001, 1e300};
  int nd = sizeof(dv) / 8; double* ddv; unsigned* ddo; cudaMalloc(&ddv, 8 * nd); cudaMalloc(&ddo, 4 * 5 * nd);
  cudaMemcpy(ddv, dv, 8 * nd, cudaMemcpyHostToDevice); dbl2narrow<<<1, 32>>>(ddv, ddo, nd);
  unsigned dout2[5 * 16]; cudaMemcpy(dout2, ddo, 4 * 5 * nd, cudaMemcpyDeviceToHost);
  for (int i = 0; i < nd; ++i) printf("d2n %a: f=%08x h=%04x bf=%04x bf_via_f=%04x h_via_f=%04x\n", dv[i],
    dout2[i*5], dout2[i*5+1], dout2[i*5+2], dout2[i*5+3], dout2[i*5+4]);
  printf("err %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
