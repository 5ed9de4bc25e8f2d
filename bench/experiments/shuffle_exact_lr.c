/* Parallel tempering over the shuffles that agree with the cards seen so far.
 *
 * Cards have fixed identities 0..n-1 (the previous shoe's dealt order) and codes. The
 * tray (the previous shoe's order as riffled) is the dealt order, except that a round
 * collected by hand lies Player's hand then Banker's, or Banker's then Player's (one bit
 * a round). A state: that bit for every such round, and the new place of every card; the
 * new places 0..m-1 were seen and must show their card's code, the places m..n-1 not.
 * Energy: r = 1 + the tray neighbours (i, i+1) whose new places fall in descending order
 * (rising sequences). Replica k samples exp(-lambda_k r); neighbours swap states.
 *
 * Moves (each symmetric and always valid, chosen with fixed chances): two cards of one
 * code swap places; two unseen places swap cards; a round's collection order flips.
 *
 * The previous shoe's last cards (tray indices T..n-1) were never dealt: their codes are
 * known as a multiset only, so their order in the tray is summed over too (a move swaps
 * two of them in the tray).
 *
 * stdin:  n m T R K sweeps burn seed / lambda[K] / code[n] / pos[n] (a valid start) /
 *         R lines "start p b" (a round: tray indices start.., p Player's cards first)
 * stdout: "k r count" for every r seen by replica k after burn-in; "swaps k rate".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t s;
static uint64_t rnd(void) {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    return s * 2685821657736338717ULL;
}
static double unif(void) { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }
static int n, m;

typedef struct { int *pos, *tray, *where, *at, *flip; int r; } State;

static int desc(const State *x, int i) {
    return (i >= 0 && i < n - 1) ? x->pos[x->tray[i + 1]] < x->pos[x->tray[i]] : 0;
}
static int add_pair(int *out, int k, int i) {
    if (i < 0 || i >= n - 1) return k;
    for (int j = 0; j < k; j++) if (out[j] == i) return k;
    out[k] = i;
    return k + 1;
}
static int pairs_of(const State *x, int a, int b, int *out) {
    int k = 0, wa = x->where[a], wb = x->where[b];
    k = add_pair(out, k, wa - 1); k = add_pair(out, k, wa);
    k = add_pair(out, k, wb - 1); k = add_pair(out, k, wb);
    return k;
}
static void swap_cards(State *x, int a, int b) {
    int pa = x->pos[a], pb = x->pos[b];
    x->pos[a] = pb; x->pos[b] = pa; x->at[pa] = b; x->at[pb] = a;
}
static int *rstart, *rp, *rb, R;
static int *tmpbuf;
static void flip_round(State *x, int k) {
    /* rotate the round's segment: [first hand, second hand] -> [second, first] */
    int st = rstart[k], len = rp[k] + rb[k];
    int first = x->flip[k] ? rb[k] : rp[k];
    for (int j = 0; j < len; j++) tmpbuf[j] = x->tray[st + (j + first) % len];
    for (int j = 0; j < len; j++) { x->tray[st + j] = tmpbuf[j]; x->where[tmpbuf[j]] = st + j; }
    x->flip[k] ^= 1;
}

int main(void) {
    int K, sweeps, burn; unsigned long long seed;
    int T;
    if (scanf("%d %d %d %d %d %d %d %llu", &n, &m, &T, &R, &K, &sweeps, &burn, &seed) != 8) return 2;
    s = seed * 0x9E3779B97F4A7C15ULL + 1;
    double *lam = malloc(K * sizeof *lam);
    for (int k = 0; k < K; k++) if (scanf("%lf", &lam[k]) != 1) return 2;
    int *code = malloc(n * sizeof *code), *start = malloc(n * sizeof *start);
    for (int q = 0; q < n; q++) if (scanf("%d", &code[q]) != 1) return 2;
    for (int q = 0; q < n; q++) if (scanf("%d", &start[q]) != 1) return 2;
    rstart = malloc((R + 1) * sizeof *rstart); rp = malloc((R + 1) * sizeof *rp);
    rb = malloc((R + 1) * sizeof *rb); tmpbuf = malloc((n + 1) * sizeof *tmpbuf);
    for (int k = 0; k < R; k++) if (scanf("%d %d %d", &rstart[k], &rp[k], &rb[k]) != 3) return 2;
    int maxc = 0; for (int q = 0; q < n; q++) if (code[q] > maxc) maxc = code[q];
    int *cnt = calloc(maxc + 1, sizeof *cnt), **grp = malloc((maxc + 1) * sizeof *grp);
    for (int q = 0; q < n; q++) cnt[code[q]]++;
    for (int c = 0; c <= maxc; c++) { grp[c] = malloc((cnt[c] + 1) * sizeof **grp); cnt[c] = 0; }
    for (int q = 0; q < n; q++) grp[code[q]][cnt[code[q]]++] = q;
    State *st = malloc(K * sizeof *st);
    for (int k = 0; k < K; k++) {
        State *x = &st[k];
        x->pos = malloc(n * sizeof(int)); x->tray = malloc(n * sizeof(int));
        x->where = malloc(n * sizeof(int)); x->at = malloc(n * sizeof(int));
        x->flip = calloc(R + 1, sizeof(int));
        memcpy(x->pos, start, n * sizeof(int));
        for (int q = 0; q < n; q++) { x->tray[q] = q; x->where[q] = q; x->at[start[q]] = q; }
        x->r = 1; for (int i = 0; i < n - 1; i++) x->r += desc(x, i);
    }
    double p_flip = R ? 0.2 : 0.0, p_unseen = (n - m >= 2) ? 0.3 : 0.0;
    double p_tail = (n - T >= 2) ? 0.1 : 0.0;
    long *hist = calloc((size_t)K * (n + 2), sizeof *hist);
    long *sw_try = calloc(K, sizeof *sw_try), *sw_ok = calloc(K, sizeof *sw_ok);
    int aff[8];
    for (int sweep = 0; sweep < sweeps; sweep++) {
        for (int k = 0; k < K; k++) {
            State *x = &st[k];
            for (int t = 0; t < n; t++) {
                double u = unif();
                if (u < p_flip) {
                    int rk = (int)(rnd() % (uint64_t)R);
                    int lo = rstart[rk] - 1, hi = rstart[rk] + rp[rk] + rb[rk] - 1, before = 0, after = 0;
                    for (int i = lo; i <= hi; i++) before += desc(x, i);
                    flip_round(x, rk);
                    for (int i = lo; i <= hi; i++) after += desc(x, i);
                    int d = after - before;
                    if (d <= 0 || unif() < exp(-lam[k] * d)) x->r += d;
                    else { flip_round(x, rk); }
                    continue;
                }
                if (u > 1.0 - p_tail) {
                    int i = T + (int)(rnd() % (uint64_t)(n - T)), j = T + (int)(rnd() % (uint64_t)(n - T));
                    if (i == j) continue;
                    int pr[4], np_ = 0, before = 0, after = 0;
                    np_ = add_pair(pr, np_, i - 1); np_ = add_pair(pr, np_, i);
                    np_ = add_pair(pr, np_, j - 1); np_ = add_pair(pr, np_, j);
                    for (int z = 0; z < np_; z++) before += desc(x, pr[z]);
                    int ci = x->tray[i], cj = x->tray[j];
                    x->tray[i] = cj; x->tray[j] = ci; x->where[cj] = i; x->where[ci] = j;
                    for (int z = 0; z < np_; z++) after += desc(x, pr[z]);
                    int d = after - before;
                    if (d <= 0 || unif() < exp(-lam[k] * d)) x->r += d;
                    else { x->tray[i] = ci; x->tray[j] = cj; x->where[ci] = i; x->where[cj] = j; }
                    continue;
                }
                int a, b;
                if (u < p_flip + p_unseen) {
                    int u1 = m + (int)(rnd() % (uint64_t)(n - m)), u2 = m + (int)(rnd() % (uint64_t)(n - m));
                    if (u1 == u2) continue;
                    a = x->at[u1]; b = x->at[u2];
                } else {
                    a = (int)(rnd() % (uint64_t)n);
                    int c = code[a];
                    if (cnt[c] < 2) continue;
                    b = grp[c][rnd() % (uint64_t)cnt[c]];
                    if (a == b) continue;
                }
                int na = pairs_of(x, a, b, aff), before = 0, after = 0;
                for (int i = 0; i < na; i++) before += desc(x, aff[i]);
                swap_cards(x, a, b);
                for (int i = 0; i < na; i++) after += desc(x, aff[i]);
                int d = after - before;
                if (d <= 0 || unif() < exp(-lam[k] * d)) x->r += d;
                else swap_cards(x, a, b);
            }
        }
        for (int k = 0; k + 1 < K; k++) {
            sw_try[k]++;
            double xx = (lam[k] - lam[k + 1]) * (st[k].r - st[k + 1].r);
            if (xx >= 0 || unif() < exp(xx)) {
                State tmp = st[k]; st[k] = st[k + 1]; st[k + 1] = tmp;
                sw_ok[k]++;
            }
        }
        if (sweep >= burn) for (int k = 0; k < K; k++) hist[(size_t)k * (n + 2) + st[k].r]++;
    }
    for (int k = 0; k < K; k++)
        for (int v = 0; v <= n + 1; v++)
            if (hist[(size_t)k * (n + 2) + v]) printf("%d %d %ld\n", k, v, hist[(size_t)k * (n + 2) + v]);
    for (int k = 0; k + 1 < K; k++) printf("swaps %d %.3f\n", k, (double)sw_ok[k] / sw_try[k]);
    return 0;
}
