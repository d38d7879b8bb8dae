use std::time::Instant;
fn main(){
    let n: u64 = 2_000_000_000;
    let t=Instant::now();
    let mut x: u64 = 3;
    unsafe { std::arch::asm!("2:", "imul {x}, {x}", "imul {x}, {x}","imul {x}, {x}","imul {x}, {x}", "sub {n}, 4", "jnz 2b", x=inout(reg) x, n=inout(reg) n => _); }
    let e=t.elapsed().as_secs_f64();
    println!("x={} {:.3} GHz", x, n as f64*3.0/e/1e9);
}
