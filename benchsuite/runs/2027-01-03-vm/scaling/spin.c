#include <stdio.h>
#include <stdlib.h>
int main(int c, char**v){ unsigned long x=1,n=atol(v[1]); for(unsigned long i=0;i<n;i++){ x = x*6364136223846793005UL + 1442695040888963407UL; x ^= x>>29; } printf("%lu\n", x&1); return 0; }
