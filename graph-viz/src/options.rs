//! What a picture shows: [`Colour`], [`Group`] and the [`Options`] that hold
//! them, with their names as a command line spells them.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// What the fill colour of a task shows: dask's `visualize(color=...)` modes
/// for orders, computed from our diagnostics of the chosen order, the
/// worker, and the stage.
///
/// Each is named as `taskgraph viz --color` spells it ([`Colour::name`],
/// [`Display`](fmt::Display)), and read back from that name
/// ([`FromStr`]; `age` is also `ages`, as in dask).
///
/// # Example
///
/// ```
/// use graph_viz::Colour;
///
/// assert_eq!("memorypressure".parse::<Colour>()?, Colour::Memorypressure);
/// assert_eq!("age".parse::<Colour>()?, Colour::Ages);
/// assert_eq!(Colour::Worker.to_string(), "worker");
/// assert!("pressure".parse::<Colour>().unwrap_err().to_string().contains("memorypressure"));
/// # Ok::<(), graph_viz::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Colour {
    /// Its position in the static order: dark purple first, yellow last
    /// (viridis).
    Order,
    /// How many steps its result stays in memory, until its last dependent
    /// runs (dask's `age`, also accepted).
    #[cfg_attr(feature = "clap", value(alias = "age"))]
    Ages,
    /// How many of its inputs it is the last to use, freed when it runs.
    Freed,
    /// How many more results are held when its result is released than when
    /// it ran: large values may mean it should have run later.
    Memoryincreases,
    /// How many fewer results are held when its result is released than when
    /// it ran: large values may mean it should have run sooner.
    Memorydecreases,
    /// How many results are held in memory just before it runs.
    Memorypressure,
    /// The worker it is placed on ([`Options::workers`]); edges between
    /// workers are dashed.
    Worker,
    /// The stage it runs in, as `taskgraph stages` plans them
    /// ([`Options::wide_ops`]); wide edges, which start a stage, are thick.
    Stage,
    /// No colour.
    None,
}

impl Colour {
    /// Every colouring, in the order `taskgraph viz --help` lists them.
    pub const ALL: [Colour; 9] = [
        Colour::Order,
        Colour::Ages,
        Colour::Freed,
        Colour::Memoryincreases,
        Colour::Memorydecreases,
        Colour::Memorypressure,
        Colour::Worker,
        Colour::Stage,
        Colour::None,
    ];

    /// The colouring's name, as a command line spells it (`memorypressure`).
    pub const fn name(self) -> &'static str {
        match self {
            Colour::Order => "order",
            Colour::Ages => "ages",
            Colour::Freed => "freed",
            Colour::Memoryincreases => "memoryincreases",
            Colour::Memorydecreases => "memorydecreases",
            Colour::Memorypressure => "memorypressure",
            Colour::Worker => "worker",
            Colour::Stage => "stage",
            Colour::None => "none",
        }
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Colour {
    type Err = Error;

    /// The colouring named `name` ([`Colour::name`], or `age` for
    /// [`Colour::Ages`]).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownColour`], which lists the names.
    fn from_str(name: &str) -> Result<Colour, Error> {
        if name == "age" {
            return Ok(Colour::Ages);
        }
        Colour::ALL
            .into_iter()
            .find(|colour| colour.name() == name)
            .ok_or_else(|| Error::UnknownColour {
                name: name.to_owned(),
            })
    }
}

/// How a collapsed picture ([`Options::collapse`]) groups tasks.
///
/// Named as `taskgraph viz --group` spells it ([`Group::name`],
/// [`Display`](fmt::Display), [`FromStr`]).
///
/// # Example
///
/// ```
/// use graph_viz::Group;
///
/// assert_eq!("stage".parse::<Group>()?, Group::Stage);
/// assert_eq!(Group::ALL.map(|group| group.to_string()), ["name", "stage"]);
/// # Ok::<(), graph_viz::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Group {
    /// By key name, as dask's task groups.
    Name,
    /// By stage, as `taskgraph stages` plans them: one box per stage, the
    /// edges between stages (the wide ones among them) between the boxes.
    Stage,
}

impl Group {
    /// Every grouping.
    pub const ALL: [Group; 2] = [Group::Name, Group::Stage];

    /// The grouping's name, as a command line spells it (`name`, `stage`).
    pub const fn name(self) -> &'static str {
        match self {
            Group::Name => "name",
            Group::Stage => "stage",
        }
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Group {
    type Err = Error;

    /// The grouping named `name` ([`Group::name`]).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownGroup`], which lists the names.
    fn from_str(name: &str) -> Result<Group, Error> {
        Group::ALL
            .into_iter()
            .find(|group| group.name() == name)
            .ok_or_else(|| Error::UnknownGroup {
                name: name.to_owned(),
            })
    }
}

/// The colourings' names, for an error: `order, ages (or age), ...`.
pub(crate) fn colour_names() -> String {
    let names: Vec<String> = Colour::ALL
        .iter()
        .map(|colour| match colour {
            Colour::Ages => "ages (or age)".to_owned(),
            other => other.name().to_owned(),
        })
        .collect();
    names.join(", ")
}

/// The groupings' names, for an error: `name, stage`.
pub(crate) fn group_names() -> String {
    let names: Vec<&str> = Group::ALL.iter().map(|group| group.name()).collect();
    names.join(", ")
}

/// How to draw a graph: what the colours show, the order and placement behind
/// them, whether to collapse tasks into groups, and the most boxes a picture
/// may have. `Default` is what `taskgraph viz` draws without flags.
///
/// The struct may grow fields: start from [`Options::default`] and set the
/// ones you need.
///
/// # Example
///
/// ```
/// use graph_viz::{Colour, Options};
///
/// let mut options = Options::default();
/// options.colour = Colour::Worker;
/// options.workers = 2;
/// assert_eq!(options.max_boxes, 2_000);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// What the colours show ([`Colour::Order`]).
    pub colour: Colour,
    /// The ordering strategy behind positions and diagnostics
    /// ([`graph_order::Strategy::Auto`]).
    pub strategy: graph_order::Strategy,
    /// The number of workers behind [`Colour::Worker`] (4).
    pub workers: u32,
    /// Draw the groups of tasks instead of the tasks (`false`).
    pub collapse: bool,
    /// What the groups are ([`Group::Name`]).
    pub group: Group,
    /// The ops whose inputs are all wide, for stages (none: the edges of
    /// complete bipartite blocks are wide in any case).
    pub wide_ops: Vec<graph_core::Op>,
    /// The most boxes a picture may have: tasks, or groups when collapsed
    /// (2,000).
    pub max_boxes: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            colour: Colour::Order,
            strategy: graph_order::Strategy::Auto,
            workers: 4,
            collapse: false,
            group: Group::Name,
            wide_ops: Vec::new(),
            max_boxes: 2_000,
        }
    }
}
