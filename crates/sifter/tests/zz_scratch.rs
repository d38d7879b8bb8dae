#[test]
fn scratch_len() {
    let c: sifter::Cache<u64, u64> = sifter::Cache::builder().capacity(10_000).policy(sifter::Policy::Mobius).build();
    for k in 0..100_000u64 { c.insert(k, k); }
    let live = (0..100_000u64).filter(|k| c.peek(k).is_some()).count();
    println!("len {} live {} weight {}", c.len(), live, c.weight());
    c.validate().unwrap();
}
