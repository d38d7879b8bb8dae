use std::time::Instant;
fn main(){
  unsafe{
    let q = libc::syscall(libc::SYS_membarrier, 0 /*QUERY*/, 0, 0);
    println!("query={q:#x}");
    let r = libc::syscall(libc::SYS_membarrier, 16 /*REGISTER_PRIVATE_EXPEDITED*/, 0, 0);
    println!("register={r}");
    // spin threads
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let nthreads: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(0);
    let mut hs=vec![];
    for _ in 0..nthreads { let s=stop.clone(); hs.push(std::thread::spawn(move|| { let mut x=0u64; while !s.load(std::sync::atomic::Ordering::Relaxed){x=x.wrapping_add(1);} x }));}
    std::thread::sleep(std::time::Duration::from_millis(50));
    let n=100000;
    let t=Instant::now();
    for _ in 0..n { let r=libc::syscall(libc::SYS_membarrier, 8 /*PRIVATE_EXPEDITED*/, 0, 0); assert_eq!(r,0); }
    println!("threads={nthreads} membarrier {:.0} ns", t.elapsed().as_nanos() as f64/n as f64);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hs { h.join().unwrap(); }
  }
}
