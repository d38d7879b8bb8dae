#include <stdio.h>
#include <stdlib.h>
int main(int c, char**v){ unsigned long a=1,b=2,d=3,e=4,f=5,g=6,h=7,k=8,n=atol(v[1]);
for(unsigned long i=0;i<n;i++){ a=a*3+i; b=b*5+i; d=d*7+i; e=e*9+i; f^=f<<1; g^=g>>1; h+=h<<2; k+=k>>3; __asm__ volatile("" : "+r"(a),"+r"(b),"+r"(d),"+r"(e),"+r"(f),"+r"(g),"+r"(h),"+r"(k)); }
printf("%lu\n", (a^b^d^e^f^g^h^k)&1); return 0; }
