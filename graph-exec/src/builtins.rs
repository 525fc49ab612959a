//! The built-in op library over `Dynamic`: numbers, lists and strings, with
//! Python's meaning for each name.

use crate::{Dynamic, OpError, OpRegistry, TaskValue};

type Result<T> = std::result::Result<T, OpError>;

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(message.into().into())
}

fn arity(name: &str, args: &[Dynamic], n: usize) -> Result<()> {
    if args.len() == n {
        Ok(())
    } else {
        fail(format!(
            "{name}() takes {n} argument{}, got {}",
            if n == 1 { "" } else { "s" },
            args.len()
        ))
    }
}

/// Two numbers, as integers when both are, else as floats.
enum Pair {
    Ints(i64, i64),
    Floats(f64, f64),
}

fn number(x: &Dynamic) -> Option<f64> {
    match x {
        Dynamic::Int(i) => Some(*i as f64),
        Dynamic::Float(f) => Some(*f),
        Dynamic::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

fn pair(op: &str, a: &Dynamic, b: &Dynamic) -> Result<Pair> {
    match (a, b) {
        (Dynamic::Int(x), Dynamic::Int(y)) => Ok(Pair::Ints(*x, *y)),
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => Ok(Pair::Floats(x, y)),
            _ => fail(format!(
                "unsupported operand types for {op}: '{}' and '{}'",
                a.type_name(),
                b.type_name()
            )),
        },
    }
}

fn overflow() -> OpError {
    "integer overflow".into()
}

/// Refuses a value of `bytes` bytes, which `op` is about to make, when it
/// is larger than `limit`: checked before allocating, so that a value too
/// large ends its task with an error instead of the process.
fn fits(op: &str, bytes: u64, limit: u64) -> Result<()> {
    if bytes > limit {
        fail(format!(
            "{op}(): the result would take {bytes} bytes, more than the limit of {limit} bytes for one value"
        ))
    } else {
        Ok(())
    }
}

/// Room for `n` more items in `buf`, or an error saying `op` ran out of
/// memory: a user-sized value is allocated fallibly, so that running out
/// ends the task with an error (under a cgroup or address-space limit,
/// say) instead of aborting the process.
fn reserve<T>(op: &str, buf: &mut Vec<T>, n: usize) -> Result<()> {
    buf.try_reserve_exact(n)
        .map_err(|_| format!("{op}(): not enough memory for a value of {n} items").into())
}

/// As [`reserve`], for the bytes of a string.
fn reserve_text(op: &str, buf: &mut String, n: usize) -> Result<()> {
    buf.try_reserve_exact(n)
        .map_err(|_| format!("{op}(): not enough memory for a value of {n} bytes").into())
}

/// `text` as a string value. Moving it into its shared allocation takes as
/// much memory again, which cannot be asked for fallibly on stable Rust:
/// that much is asked for first, fallibly, and given back just before.
fn shared_text(op: &str, text: String) -> Result<Dynamic> {
    let mut room = String::new();
    reserve_text(op, &mut room, text.len())?;
    drop(room);
    Ok(Dynamic::Str(text.into()))
}

/// `items` as a list value, as [`shared_text`] makes a string.
fn shared_list(op: &str, items: Vec<Dynamic>) -> Result<Dynamic> {
    let mut room: Vec<Dynamic> = Vec::new();
    reserve(op, &mut room, items.len())?;
    drop(room);
    Ok(Dynamic::List(items.into()))
}

/// The bytes of a list of `n` items (their own storage; what they share is
/// not copied).
fn list_bytes(n: usize) -> u64 {
    (n as u64).saturating_mul(std::mem::size_of::<Dynamic>() as u64)
}

fn add2(a: &Dynamic, b: &Dynamic, limit: u64) -> Result<Dynamic> {
    match (a, b) {
        (Dynamic::Str(x), Dynamic::Str(y)) => {
            fits("add", x.len() as u64 + y.len() as u64, limit)?;
            let mut out = String::new();
            reserve_text("add", &mut out, x.len() + y.len())?;
            out.push_str(x);
            out.push_str(y);
            shared_text("add", out)
        }
        (Dynamic::List(x), Dynamic::List(y)) => {
            fits("add", list_bytes(x.len() + y.len()), limit)?;
            let mut out = Vec::new();
            reserve("add", &mut out, x.len() + y.len())?;
            out.extend(x.iter().chain(y.iter()).cloned());
            shared_list("add", out)
        }
        _ => match pair("+", a, b)? {
            Pair::Ints(x, y) => x.checked_add(y).map(Dynamic::Int).ok_or_else(overflow),
            Pair::Floats(x, y) => Ok(Dynamic::Float(x + y)),
        },
    }
}

fn sub2(a: &Dynamic, b: &Dynamic) -> Result<Dynamic> {
    match pair("-", a, b)? {
        Pair::Ints(x, y) => x.checked_sub(y).map(Dynamic::Int).ok_or_else(overflow),
        Pair::Floats(x, y) => Ok(Dynamic::Float(x - y)),
    }
}

fn mul2(a: &Dynamic, b: &Dynamic) -> Result<Dynamic> {
    match pair("*", a, b)? {
        Pair::Ints(x, y) => x.checked_mul(y).map(Dynamic::Int).ok_or_else(overflow),
        Pair::Floats(x, y) => Ok(Dynamic::Float(x * y)),
    }
}

fn div2(a: &Dynamic, b: &Dynamic) -> Result<Dynamic> {
    let (x, y) = match pair("/", a, b)? {
        Pair::Ints(x, y) => (x as f64, y as f64),
        Pair::Floats(x, y) => (x, y),
    };
    if y == 0.0 {
        return fail("division by zero");
    }
    Ok(Dynamic::Float(x / y))
}

/// The items an aggregate works on: the one list argument, or the arguments.
fn items<'a>(name: &str, args: &'a [Dynamic]) -> Result<&'a [Dynamic]> {
    match args {
        [Dynamic::List(items)] => Ok(items),
        [single] => fail(format!(
            "'{}' object is not iterable (in {name})",
            single.type_name()
        )),
        many => Ok(many),
    }
}

fn compare(a: &Dynamic, b: &Dynamic) -> Result<std::cmp::Ordering> {
    match (a, b) {
        (Dynamic::Str(x), Dynamic::Str(y)) => Ok(x.cmp(y)),
        (Dynamic::Int(x), Dynamic::Int(y)) => Ok(x.cmp(y)),
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y).ok_or_else(|| "cannot order NaN".into()),
            _ => fail(format!(
                "'<' not supported between instances of '{}' and '{}'",
                a.type_name(),
                b.type_name()
            )),
        },
    }
}

fn extreme(name: &str, args: &[Dynamic], keep: std::cmp::Ordering) -> Result<Dynamic> {
    let items = items(name, args)?;
    let Some(mut best) = items.first() else {
        return fail(format!("{name}() arg is an empty sequence"));
    };
    for item in &items[1..] {
        if compare(item, best)? == keep {
            best = item;
        }
    }
    Ok(best.clone())
}

fn float_of(name: &str, x: &Dynamic) -> Result<f64> {
    number(x)
        .ok_or_else(|| format!("must be real number, not {} (in {name})", x.type_name()).into())
}

fn text<'a>(name: &str, x: &'a Dynamic) -> Result<&'a str> {
    match x {
        Dynamic::Str(s) => Ok(s),
        other => fail(format!("{name}() needs a str, not '{}'", other.type_name())),
    }
}

fn index(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { i + len as i64 } else { i };
    usize::try_from(i).ok().filter(|&i| i < len)
}

impl OpRegistry<Dynamic> {
    /// The built-in ops, each with its Python meaning:
    ///
    /// | op | meaning |
    /// |---|---|
    /// | `inc`, `dec`, `neg` | `x + 1`, `x - 1`, `-x` |
    /// | `add`, `sub`, `mul`, `div` | `a + b` (also strings and lists), `a - b`, `a * b`, `a / b` (true division) |
    /// | `exp`, `log` | `math.exp(x)`, `math.log(x)` |
    /// | `sum`, `max`, `min` | over one list argument, or over all arguments |
    /// | `list`, `len`, `getitem`, `concat` | `[args...]`, `len(x)`, `x[i]` (negative indices too), lists joined |
    /// | `split`, `count`, `format`, `upper` | `s.split()` or `s.split(sep)`, `s.count(sub)` (or `list.count(x)`), `'{}'`-placeholders filled in order, `s.upper()` |
    /// | `identity` | its one argument |
    /// | `sleep` | `sleep(x, seconds)`: waits `seconds` (at most an hour), then returns `x` |
    /// | `blob`, `checksum` | `blob(n, inputs...)`: a string of `n` bytes that depends on every input; `checksum(inputs...)`: an integer hash of the inputs' contents (for graphs that test memory, see `taskgraph generate --value-bytes`) |
    ///
    /// Integer arithmetic that overflows 64 bits is an error, as is division
    /// by zero or the log of a non-positive number.
    pub fn builtins() -> Self {
        OpRegistry::builtins_with_value_limit(crate::memory::default_value_limit())
    }

    /// [`OpRegistry::builtins`] whose ops refuse, before allocating it, a
    /// value of more than `limit` bytes (`add` and `sum` of strings or lists,
    /// `concat`, `format`, `blob`). The default ([`OpRegistry::builtins`])
    /// is half of the machine's memory.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_exec::{Dynamic, OpRegistry};
    ///
    /// let registry = OpRegistry::<Dynamic>::builtins_with_value_limit(10);
    /// let add = registry.get("add").unwrap();
    /// let err = add(&[Dynamic::from("hello "), Dynamic::from("world")]).unwrap_err();
    /// assert_eq!(err.to_string(), "add(): the result would take 11 bytes, more than the limit of 10 bytes for one value");
    /// ```
    pub fn builtins_with_value_limit(limit: u64) -> Self {
        let mut r = OpRegistry::new();
        r.register("identity", |a| {
            arity("identity", a, 1)?;
            Ok(a[0].clone())
        });
        r.register("sleep", |a| {
            arity("sleep", a, 2)?;
            let seconds = float_of("sleep", &a[1])?;
            if !(0.0..=3600.0).contains(&seconds) {
                return fail(format!("sleep of {seconds} s: must be 0 to 3600"));
            }
            std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
            Ok(a[0].clone())
        });
        r.register("inc", move |a| {
            arity("inc", a, 1)?;
            add2(&a[0], &Dynamic::Int(1), limit)
        });
        r.register("dec", |a| {
            arity("dec", a, 1)?;
            sub2(&a[0], &Dynamic::Int(1))
        });
        r.register("neg", |a| {
            arity("neg", a, 1)?;
            match &a[0] {
                Dynamic::Int(i) => i.checked_neg().map(Dynamic::Int).ok_or_else(overflow),
                other => Ok(Dynamic::Float(-float_of("neg", other)?)),
            }
        });
        r.register("add", move |a| {
            arity("add", a, 2)?;
            add2(&a[0], &a[1], limit)
        });
        r.register("sub", |a| {
            arity("sub", a, 2)?;
            sub2(&a[0], &a[1])
        });
        r.register("mul", |a| {
            arity("mul", a, 2)?;
            mul2(&a[0], &a[1])
        });
        r.register("div", |a| {
            arity("div", a, 2)?;
            div2(&a[0], &a[1])
        });
        r.register("exp", |a| {
            arity("exp", a, 1)?;
            Ok(Dynamic::Float(float_of("exp", &a[0])?.exp()))
        });
        r.register("log", |a| {
            arity("log", a, 1)?;
            let x = float_of("log", &a[0])?;
            if x <= 0.0 {
                return fail("math domain error");
            }
            Ok(Dynamic::Float(x.ln()))
        });
        r.register("sum", move |a| {
            items("sum", a)?
                .iter()
                .try_fold(Dynamic::Int(0), |acc, x| add2(&acc, x, limit))
        });
        r.register("max", |a| extreme("max", a, std::cmp::Ordering::Greater));
        r.register("min", |a| extreme("min", a, std::cmp::Ordering::Less));
        r.register("list", |a| Ok(Dynamic::List(a.into())));
        r.register("len", |a| {
            arity("len", a, 1)?;
            match &a[0] {
                Dynamic::List(items) => Ok(Dynamic::Int(items.len() as i64)),
                Dynamic::Str(s) => Ok(Dynamic::Int(s.chars().count() as i64)),
                other => fail(format!(
                    "object of type '{}' has no len()",
                    other.type_name()
                )),
            }
        });
        r.register("getitem", |a| {
            arity("getitem", a, 2)?;
            let Dynamic::Int(i) = a[1] else {
                return fail(format!(
                    "indices must be integers, not {}",
                    a[1].type_name()
                ));
            };
            match &a[0] {
                Dynamic::List(items) => index(items.len(), i)
                    .map(|i| items[i].clone())
                    .ok_or_else(|| "list index out of range".into()),
                Dynamic::Str(s) => {
                    let chars: Vec<char> = s.chars().collect();
                    index(chars.len(), i)
                        .map(|i| Dynamic::Str(chars[i].to_string().into()))
                        .ok_or_else(|| "string index out of range".into())
                }
                other => fail(format!(
                    "'{}' object is not subscriptable",
                    other.type_name()
                )),
            }
        });
        r.register("concat", move |a| {
            let parts = items("concat", a)?;
            let total: usize = parts
                .iter()
                .map(|part| match part {
                    Dynamic::List(items) => items.len(),
                    _ => 0,
                })
                .sum();
            fits("concat", list_bytes(total), limit)?;
            let mut out = Vec::new();
            reserve("concat", &mut out, total)?;
            for part in parts {
                match part {
                    Dynamic::List(items) => out.extend(items.iter().cloned()),
                    other => {
                        return fail(format!(
                            "can only concatenate lists, not '{}'",
                            other.type_name()
                        ));
                    }
                }
            }
            shared_list("concat", out)
        });
        r.register("split", |a| {
            let words: Vec<Dynamic> = match a {
                [s] => text("split", s)?
                    .split_whitespace()
                    .map(Dynamic::from)
                    .collect(),
                [s, sep] => {
                    let sep = text("split", sep)?;
                    if sep.is_empty() {
                        return fail("empty separator");
                    }
                    text("split", s)?.split(sep).map(Dynamic::from).collect()
                }
                _ => return fail(format!("split() takes 1 or 2 arguments, got {}", a.len())),
            };
            Ok(Dynamic::List(words.into()))
        });
        r.register("count", |a| {
            arity("count", a, 2)?;
            match (&a[0], &a[1]) {
                (Dynamic::Str(s), Dynamic::Str(sub)) if sub.is_empty() => {
                    Ok(Dynamic::Int(s.chars().count() as i64 + 1))
                }
                (Dynamic::Str(s), Dynamic::Str(sub)) => {
                    Ok(Dynamic::Int(s.matches(&**sub).count() as i64))
                }
                (Dynamic::List(items), x) => Ok(Dynamic::Int(
                    items.iter().filter(|item| *item == x).count() as i64,
                )),
                (s, sub) => fail(format!(
                    "count() of '{}' in '{}'",
                    sub.type_name(),
                    s.type_name()
                )),
            }
        });
        r.register("format", move |a| {
            let Some((template, args)) = a.split_first() else {
                return fail("format() needs a template");
            };
            let template = text("format", template)?;
            // A value spells in at most about three bytes per byte it holds.
            let spelled: u64 = args
                .iter()
                .map(|arg| match arg {
                    Dynamic::Str(s) => s.len() as u64,
                    other => other.size_bytes().unwrap_or(0).saturating_mul(3),
                })
                .sum();
            fits("format", template.len() as u64 + spelled, limit)?;
            let mut out = String::new();
            // What the strings take; other values spell in a few bytes more.
            reserve_text(
                "format",
                &mut out,
                template.len()
                    + args
                        .iter()
                        .map(|arg| match arg {
                            Dynamic::Str(s) => s.len(),
                            _ => 0,
                        })
                        .sum::<usize>(),
            )?;
            let mut pieces = template.split("{}");
            out.push_str(pieces.next().unwrap_or(""));
            for (used, piece) in pieces.enumerate() {
                let Some(arg) = args.get(used) else {
                    return fail(format!(
                        "format(): the template has more {{}} than the {} arguments",
                        args.len()
                    ));
                };
                match arg {
                    Dynamic::Str(s) => out.push_str(s),
                    other => out.push_str(&other.to_string()),
                }
                out.push_str(piece);
            }
            shared_text("format", out)
        });
        r.register("upper", |a| {
            arity("upper", a, 1)?;
            Ok(Dynamic::Str(text("upper", &a[0])?.to_uppercase().into()))
        });
        r.register("checksum", |a| Ok(Dynamic::Int(checksum(a) as i64)));
        r.register("blob", move |a| {
            let Some((n, inputs)) = a.split_first() else {
                return fail("blob() takes a size and inputs, got no arguments");
            };
            let n = match n {
                Dynamic::Int(n) => usize::try_from(*n)
                    .map_err(|_| format!("blob() of {n} bytes: the size must be at least 0"))?,
                other => {
                    return fail(format!(
                        "blob() takes a size in bytes first, not '{}'",
                        other.type_name()
                    ));
                }
            };
            fits("blob", n as u64, limit)?;
            shared_text("blob", blob(n, checksum(inputs))?)
        });
        r
    }
}

/// A 64-bit hash of the values' contents, eight bytes at a time: the same
/// values hash alike in every process and on every machine.
fn checksum(values: &[Dynamic]) -> u64 {
    let mut hash = Hasher::default();
    let mut stack: Vec<&Dynamic> = values.iter().rev().collect();
    while let Some(value) = stack.pop() {
        match value {
            Dynamic::None => hash.word(1),
            Dynamic::Bool(b) => hash.word(2 + u64::from(*b)),
            Dynamic::Int(i) => {
                hash.word(4);
                hash.word(*i as u64);
            }
            Dynamic::Float(x) => {
                hash.word(5);
                hash.word(x.to_bits());
            }
            Dynamic::Str(s) => {
                hash.word(6);
                hash.bytes(s.as_bytes());
            }
            Dynamic::List(items) => {
                hash.word(7);
                hash.word(items.len() as u64);
                stack.extend(items.iter().rev());
            }
        }
    }
    hash.0
}

/// A multiply-and-shift mixer over 64-bit words.
struct Hasher(u64);

impl Default for Hasher {
    fn default() -> Hasher {
        Hasher(0x243f_6a88_85a3_08d3)
    }
}

impl Hasher {
    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.word(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.word(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut last = [0_u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(last));
    }
}

/// `n` bytes of printable ASCII drawn from `seed`: a value of a known size
/// whose content depends on the seed.
fn blob(n: usize, seed: u64) -> Result<String> {
    let mut bytes: Vec<u8> = Vec::new();
    bytes
        .try_reserve_exact(n)
        .map_err(|_| format!("blob() of {n} bytes: not enough memory"))?;
    let mut state = seed;
    while bytes.len() < n {
        // SplitMix64, each byte mapped into '@'..='\x7f' (ASCII, so UTF-8).
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let word = (z & 0x3f3f_3f3f_3f3f_3f3f) | 0x4040_4040_4040_4040;
        let take = (n - bytes.len()).min(8);
        bytes.extend_from_slice(&word.to_le_bytes()[..take]);
    }
    Ok(String::from_utf8(bytes).expect("the bytes are ASCII"))
}
