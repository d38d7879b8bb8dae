// One cache line passed back and forth between the two CPUs: the time of one transfer (a
// store on one CPU seen by a load on the other), median of 9 bursts of 200,000 round trips.
// Build: gcc -O2 -pthread pingpong.c -o pingpong
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 200000
static _Alignas(64) atomic_long line;

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) {
    perror("pthread_setaffinity_np");
    exit(1);
  }
}

static void *pong(void *arg) {
  (void)arg;
  pin(1);
  for (long i = 0; i < 9L * ROUNDS; i++) {
    while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {}
    atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, pong, NULL);
  pin(0);
  double ns[9];
  long v = 0;
  for (int b = 0; b < 9; b++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < ROUNDS; i++) {
      atomic_store_explicit(&line, v + 1, memory_order_release);
      while (atomic_load_explicit(&line, memory_order_acquire) != v + 2) {}
      v += 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ns[b] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * ROUNDS);
  }
  pthread_join(t, NULL);
  qsort(ns, 9, sizeof ns[0], cmp);
  printf("%.1f\n", ns[4]);
  return 0;
}
