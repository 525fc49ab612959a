//! The figures a picture colours tasks by: each task's order position and
//! dask's order diagnostics (age, inputs freed, results held when it runs
//! and when it is released), its worker, and its stage.

use graph_core::{Dag, Shape, TaskGraph};
use graph_order::{Diagnostics, Order, OrderConfig, diagnostics, ranks_by_str, shape_sizes};
use serde_json::json;

use crate::colour::{GREENS, RD_BU_BLUE, RD_BU_RED, REDS, Ramp, VIRIDIS, YL_OR_RD};
use crate::{Colour, Error, Group, Options};

/// Everything a task's label, fill and hover card show, per task (indexed by
/// node).
#[derive(Debug)]
pub(crate) struct Figures {
    /// What the fill shows.
    pub(crate) colour: Colour,
    /// The order's strategy (`dask`, or `auto, kept dfs`).
    pub(crate) strategy: String,
    /// Each task's position in the static order.
    pub(crate) order: Vec<u32>,
    /// dask's diagnostics of that order.
    pub(crate) diagnostics: Diagnostics,
    /// Where tasks have sizes: the bytes held just before each task runs,
    /// which memory pressure then shows.
    pub(crate) bytes_when_run: Option<Vec<u64>>,
    /// Each task's worker, for [`Colour::Worker`].
    pub(crate) workers: Option<Vec<u32>>,
    /// The number of workers behind `workers`.
    pub(crate) n_workers: u32,
    /// The stage plan, for [`Colour::Stage`] and grouping by stage.
    pub(crate) stages: Option<Stages>,
}

/// Each task's stage and the wide edges, as `taskgraph stages` plans them.
#[derive(Debug)]
pub(crate) struct Stages {
    /// Each task's stage.
    pub(crate) stage: Vec<u32>,
    /// The number of stages.
    pub(crate) count: u32,
    /// The wide edges, as `(dependency, dependent)` node indices, sorted.
    pub(crate) wide: Vec<(u32, u32)>,
}

impl Stages {
    /// The plan of `graph` with `wide_ops`.
    pub(crate) fn plan(graph: &TaskGraph, wide_ops: &[graph_core::Op]) -> Result<Stages, Error> {
        let config = graph_optimize::StageConfig {
            wide_ops: wide_ops.to_vec(),
            ..graph_optimize::StageConfig::default()
        };
        let plan = graph_optimize::plan_stages(graph, &config)?;
        let mut wide: Vec<(u32, u32)> = plan
            .wide_edges
            .iter()
            .map(|&(from, to)| (from.as_u32(), to.as_u32()))
            .collect();
        wide.sort_unstable();
        Ok(Stages {
            stage: plan.stage,
            count: plan.stage_count as u32,
            wide,
        })
    }

    /// Whether the edge `from -> to` is wide.
    pub(crate) fn is_wide(&self, from: u32, to: u32) -> bool {
        self.wide.binary_search(&(from, to)).is_ok()
    }
}

impl Figures {
    /// Orders `graph` and computes its diagnostics (and, for
    /// [`Colour::Worker`], places it on workers).
    ///
    /// Complexity: that of the ordering and placement, plus O(V + E).
    pub(crate) fn compute(graph: &TaskGraph, options: &Options) -> Result<Figures, Error> {
        // The order `taskgraph order` gives: ties broken by `str(key)`, and
        // the literal tasks dask's data nodes, as `dask.order` has them.
        let shape = Shape::of(graph)?;
        let ties = ranks_by_str(shape.keys());
        let sizes = shape_sizes(&shape);
        let config = OrderConfig {
            is_data: shape.literals(),
            sizes: sizes.as_deref().unwrap_or_default(),
            ..OrderConfig::new(options.strategy)
        };
        let order = graph_order::order(shape.topology(), &ties, &config)?;
        let bytes_when_run = match &sizes {
            Some(sizes) => {
                Some(graph_order::byte_diagnostics(shape.topology(), &order, sizes)?.bytes_when_run)
            }
            None => None,
        };
        let strategy = match options.strategy {
            graph_order::Strategy::Auto => format!(
                "auto, kept {}",
                order.strategy().map_or("?", graph_order::Strategy::name)
            ),
            other => other.name().to_owned(),
        };
        let workers = match options.colour {
            Colour::Worker => Some(crate::workers(graph, options.workers as usize)?),
            _ => None,
        };
        let by_stage = options.collapse && options.group == Group::Stage;
        let stages = if options.colour == Colour::Stage || by_stage {
            Some(Stages::plan(graph, &options.wide_ops)?)
        } else {
            None
        };
        let mut figures = Figures::with(
            graph,
            options.colour,
            strategy,
            order,
            workers,
            options.workers,
        )?;
        figures.stages = stages;
        figures.bytes_when_run = bytes_when_run;
        Ok(figures)
    }

    /// The figures of an order made elsewhere.
    pub(crate) fn with(
        graph: &TaskGraph,
        colour: Colour,
        strategy: String,
        order: Order,
        workers: Option<Vec<u32>>,
        n_workers: u32,
    ) -> Result<Figures, Error> {
        let diagnostics = diagnostics(graph.topology()?, &order)?;
        let n_workers = workers
            .as_ref()
            .and_then(|w| w.iter().max())
            .map_or(n_workers, |&top| n_workers.max(top + 1));
        Ok(Figures {
            colour,
            strategy,
            order: order.into_priorities(),
            diagnostics,
            bytes_when_run: None,
            workers,
            n_workers,
            stages: None,
        })
    }

    /// The number of tasks.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// The figure the fill shows for task `index`, `None` for
    /// [`Colour::None`] (and for [`Colour::Worker`] without workers).
    /// Memory pressure counts bytes where tasks have sizes.
    pub(crate) fn value(&self, index: usize) -> Option<u64> {
        let d = &self.diagnostics;
        Some(u64::from(match self.colour {
            Colour::Order => self.order[index],
            Colour::Ages => d.age[index],
            Colour::Freed => d.dependencies_freed[index],
            Colour::Memoryincreases => increase(d, index),
            Colour::Memorydecreases => decrease(d, index),
            Colour::Memorypressure => match &self.bytes_when_run {
                Some(bytes) => return Some(bytes[index]),
                None => d.data_when_run[index],
            },
            Colour::Worker => self.workers.as_ref()?[index],
            Colour::Stage => self.stages.as_ref()?.stage[index],
            Colour::None => return None,
        }))
    }

    /// The most the order holds: `80 results held`, and where tasks have
    /// sizes `80 results held, 4,000,632 bytes`.
    pub(crate) fn held(&self) -> String {
        let results = crate::legend::thousands(u64::from(self.diagnostics.max_pressure));
        match self.bytes_when_run.as_ref().and_then(|b| b.iter().max()) {
            Some(&bytes) => format!(
                "{results} results held, {} bytes",
                crate::legend::thousands(bytes)
            ),
            None => format!("{results} results held"),
        }
    }

    /// What the figure means, for the legend: in bytes where memory
    /// pressure counts them.
    pub(crate) fn meaning(&self) -> &'static str {
        match (self.colour, &self.bytes_when_run) {
            (Colour::Memorypressure, Some(_)) => {
                "bytes of results held in memory just before a task runs"
            }
            (colour, _) => colour.meaning(),
        }
    }

    /// The task's figures for its hover card.
    pub(crate) fn card(&self, index: usize) -> TaskFigures {
        let d = &self.diagnostics;
        TaskFigures {
            order: self.order[index],
            age: d.age[index],
            freed: d.dependencies_freed[index],
            held_when_run: d.data_when_run[index],
            held_when_released: d.data_when_released[index],
            increase: increase(d, index),
            decrease: decrease(d, index),
            worker: self.workers.as_ref().map(|w| w[index]),
        }
    }
}

/// One task's figures, as the hover card of an HTML page lists them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskFigures {
    /// Its position in the order.
    pub(crate) order: u32,
    /// dask's `age`.
    pub(crate) age: u32,
    /// dask's `num_dependencies_freed`.
    pub(crate) freed: u32,
    /// dask's `num_data_when_run`.
    pub(crate) held_when_run: u32,
    /// dask's `num_data_when_released`.
    pub(crate) held_when_released: u32,
    /// dask's `memoryincreases` figure.
    pub(crate) increase: u32,
    /// dask's `memorydecreases` figure.
    pub(crate) decrease: u32,
    /// Its worker, when placed.
    pub(crate) worker: Option<u32>,
}

impl TaskFigures {
    /// The figures as the hover card reads them: an object with a member per
    /// field, `worker` only when placed.
    pub(crate) fn to_json(self) -> serde_json::Value {
        let mut card = json!({
            "order": self.order,
            "age": self.age,
            "freed": self.freed,
            "held_when_run": self.held_when_run,
            "held_when_released": self.held_when_released,
            "increase": self.increase,
            "decrease": self.decrease,
        });
        if let (Some(worker), Some(fields)) = (self.worker, card.as_object_mut()) {
            fields.insert("worker".to_owned(), json!(worker));
        }
        card
    }
}

/// dask's `memoryincreases`: `max(0, num_data_when_released - num_data_when_run)`.
fn increase(d: &Diagnostics, index: usize) -> u32 {
    d.data_when_released[index].saturating_sub(d.data_when_run[index])
}

/// dask's `memorydecreases`: `max(0, num_data_when_run - num_data_when_released)`.
fn decrease(d: &Diagnostics, index: usize) -> u32 {
    d.data_when_run[index].saturating_sub(d.data_when_released[index])
}

impl Colour {
    /// The ramp of a figure's scale (`None` for worker and none).
    pub(crate) fn ramp(self) -> Option<Ramp> {
        Some(match self {
            Colour::Order => VIRIDIS,
            Colour::Ages => YL_OR_RD,
            Colour::Freed => GREENS,
            Colour::Memoryincreases => RD_BU_RED,
            Colour::Memorydecreases => RD_BU_BLUE,
            Colour::Memorypressure => REDS,
            Colour::Worker | Colour::Stage | Colour::None => return None,
        })
    }

    /// The figure's word in a task's label (`age 3`), `None` for order,
    /// whose figure is the position the label shows anyway.
    pub(crate) fn word(self) -> Option<&'static str> {
        match self {
            Colour::Ages => Some("age"),
            Colour::Freed => Some("freed"),
            Colour::Memoryincreases => Some("increase"),
            Colour::Memorydecreases => Some("decrease"),
            Colour::Memorypressure => Some("held"),
            Colour::Worker => Some("worker"),
            Colour::Stage => Some("stage"),
            Colour::Order | Colour::None => None,
        }
    }

    /// What the figure means, for the legend (`\n` breaks a line).
    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Colour::Order => "position in the static order, first to last",
            Colour::Ages => "steps a result stays in memory, until its last dependent runs",
            Colour::Freed => "inputs a task is the last to use, freed when it runs",
            Colour::Memoryincreases => {
                "results held more when a result is released than when its task ran\n\
                 (large: the task should have run later)"
            }
            Colour::Memorydecreases => {
                "results held fewer when a result is released than when its task ran\n\
                 (large: the task should have run sooner)"
            }
            Colour::Memorypressure => "results held in memory just before a task runs",
            Colour::Worker => "the worker a task is placed on",
            Colour::Stage => {
                "the stage a task runs in: stages split at wide (all-to-all) dependencies"
            }
            Colour::None => "no colouring",
        }
    }
}

/// Checks that `graph`'s tasks are as many as the figures' (they are when
/// the figures were computed from it, as [`crate::picture()`] computes them),
/// so that every task's figures can be read by its node index.
pub(crate) fn check_len(graph: &TaskGraph, figures: &Figures) -> Result<(), Error> {
    let n = graph.topology()?.node_count();
    let per_task = [
        figures.diagnostics.age.len(),
        figures.diagnostics.dependencies_freed.len(),
        figures.diagnostics.data_when_run.len(),
        figures.diagnostics.data_when_released.len(),
        figures.workers.as_ref().map_or(n, Vec::len),
        figures.stages.as_ref().map_or(n, |s| s.stage.len()),
    ];
    match std::iter::once(figures.len())
        .chain(per_task)
        .find(|&len| len != n)
    {
        Some(found) => Err(Error::Order(graph_order::Error::LengthMismatch {
            what: "a task's figures",
            expected: n,
            found,
        })),
        None => Ok(()),
    }
}
