//! A test-only plain component: wit-bindgen alone, its own WIT (`wit/plain.wit`), no Toolcell
//! contract. The host serves each exported function as a tool; `bump` takes a resource and must be
//! refused alone; `spin` and `hog` must be stopped by the limits; `read` tries paths the sandbox
//! must refuse.
#![allow(unsafe_code)] // the generated export glue is unsafe
#![allow(missing_docs)] // the generated bindings are not documented

wit_bindgen::generate!({
    path: "wit",
    world: "plain",
});

use exports::test::plain::kit::{self, Color, GuestCounter, Perms, Person, Shape};

struct Plain;

struct Counter;

impl GuestCounter for Counter {
    fn new() -> Counter {
        Counter
    }

    fn get(&self) -> u32 {
        7
    }
}

impl kit::Guest for Plain {
    type Counter = Counter;

    fn greet(who: Person, excited: Option<bool>) -> String {
        let end = if excited == Some(true) { "!" } else { "." };
        format!("Hello, {} ({}){end}", who.name, who.age)
    }

    #[allow(clippy::type_complexity)]
    fn ints(
        a: i8,
        b: u8,
        c: i16,
        d: u16,
        e: i32,
        f: u32,
        g: i64,
        h: u64,
    ) -> (i8, u8, i16, u16, i32, u32, i64, u64) {
        (a, b, c, d, e, f, g, h)
    }

    fn floats(x: f32, y: f64, c: char) -> (f32, f64, char) {
        (x, y, c)
    }

    fn shapes(s: Shape, c: Color, p: Perms) -> (Shape, Color, Perms) {
        (s, c, p)
    }

    fn lists(
        mut data: Vec<u8>,
        words: Vec<String>,
        maybe: Vec<Option<u32>>,
    ) -> (Vec<u8>, Vec<String>, Vec<Option<u32>>) {
        data.reverse();
        (data, words, maybe)
    }

    fn divide(a: i32, b: i32) -> Result<i32, String> {
        a.checked_div(b)
            .ok_or_else(|| format!("cannot divide {a} by {b}"))
    }

    fn choose(r: Result<u32, String>) -> u32 {
        match r {
            Ok(n) => n,
            Err(e) => e.len() as u32,
        }
    }

    fn bump(c: kit::CounterBorrow<'_>) -> u32 {
        c.get::<Counter>().get()
    }

    fn spin() {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }

    fn hog() -> u64 {
        let mut kept: Vec<Vec<u8>> = Vec::new();
        loop {
            kept.push(vec![1; 1 << 20]);
            if kept.len() == usize::MAX {
                return kept.len() as u64;
            }
        }
    }

    fn read(path: String) -> Result<String, String> {
        std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))
    }
}

impl Guest for Plain {
    fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
}

export!(Plain);
