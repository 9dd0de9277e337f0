// grow_cache.rs - a Rust program whose memory keeps growing, through the
// system allocator (Rust's default): heapinject must see it and print Rust
// names demangled (legacy mangling for this crate, v0 for std).
use std::io::Write;

#[inline(never)]
fn grow_cache(cache: &mut Vec<Vec<u8>>) {
    cache.push(vec![7u8; 4096]);
}

fn main() {
    let mut cache = Vec::new();
    println!("ready");
    std::io::stdout().flush().unwrap();
    loop {
        grow_cache(&mut cache);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
