#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
void* f(void*a){uint64_t x=(uint64_t)a+1,y=3,z=5,w=7;for(long i=0;i<800000000;i++){x=x*6364136223846793005ULL+1;y=y*2862933555777941757ULL+3;z^=z<<7;w+=x>>3;}return (void*)(x^y^z^w);}
int main(){pthread_t t[2];for(int n=1;n<=2;n++){double s=now();for(int i=0;i<n;i++)pthread_create(&t[i],0,f,(void*)(long)i);for(int i=0;i<n;i++)pthread_join(t[i],0);double e=now()-s;printf("%d threads: %.3f s, %.2f Gloop/s\n",n,e,n*0.8/e);}}
