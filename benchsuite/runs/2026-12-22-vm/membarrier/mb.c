#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <pthread.h>
#include <time.h>
static volatile int stop;
static void *spin(void *a){ volatile unsigned long x=0; while(!stop) x++; return 0; }
static int mb(int cmd){ return syscall(__NR_membarrier, cmd, 0, 0); }
int main(){
  int q = mb(MEMBARRIER_CMD_QUERY); printf("query %x\n", q);
  printf("register %d\n", mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED));
  for (int th=0; th<2; th++){
    pthread_t t; if(th) pthread_create(&t,0,spin,0);
    struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
    int n=20000; for(int i=0;i<n;i++) mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    clock_gettime(CLOCK_MONOTONIC,&b);
    printf("threads %d: %.2f us per membarrier\n", th+1, ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/n/1000.0);
    if(th){stop=1; pthread_join(t,0);}
  }
}
