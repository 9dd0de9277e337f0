// inline_chain.rs - a Rust program (built with v0 mangling) that leaks from
// a function inlined ten deep: leak_l0 holds the leaking line, and the
// report must show it, with every name demangled, although it sits under
// Vec's own inlined frames (issue 16). Prints "ready"; runs until killed.
use std::io::Write;

#[inline(always)]
fn leak_l0(keep: &mut Vec<Vec<u8>>) {
    keep.push(vec![7u8; 4096]); // THE LEAK
}
#[inline(always)] fn leak_l1(k: &mut Vec<Vec<u8>>) { leak_l0(k) }
#[inline(always)] fn leak_l2(k: &mut Vec<Vec<u8>>) { leak_l1(k) }
#[inline(always)] fn leak_l3(k: &mut Vec<Vec<u8>>) { leak_l2(k) }
#[inline(always)] fn leak_l4(k: &mut Vec<Vec<u8>>) { leak_l3(k) }
#[inline(always)] fn leak_l5(k: &mut Vec<Vec<u8>>) { leak_l4(k) }
#[inline(always)] fn leak_l6(k: &mut Vec<Vec<u8>>) { leak_l5(k) }
#[inline(always)] fn leak_l7(k: &mut Vec<Vec<u8>>) { leak_l6(k) }
#[inline(always)] fn leak_l8(k: &mut Vec<Vec<u8>>) { leak_l7(k) }
#[inline(always)] fn leak_l9(k: &mut Vec<Vec<u8>>) { leak_l8(k) }

fn main() {
    let mut keep = Vec::new();
    println!("ready");
    std::io::stdout().flush().unwrap();
    loop {
        leak_l9(&mut keep);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
