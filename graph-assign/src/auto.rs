//! The default placement: few edges cut, unless that costs wall time.

use graph_core::{Dag, Topology};

use crate::{Assignment, Error, ListConfig, Workers, assign, assign_list, makespan};

/// When [`assign_auto`] gives up the partitioner's few cut edges for the
/// list schedule's wall time: only where the list schedule is simulated to
/// finish both `slack` times and `min_gain` seconds sooner. `Default`: a
/// quarter sooner, whatever the gain.
///
/// A gain of a few milliseconds is worth nothing to a run that takes longer
/// than that to start its processes: the command line asks for 10 ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoRule {
    /// How many times longer the partitioner's simulated wall time may be.
    pub slack: f64,
    /// How many seconds longer it may be, whatever the ratio.
    pub min_gain: f64,
}

impl Default for AutoRule {
    fn default() -> Self {
        AutoRule {
            slack: 1.25,
            min_gain: 0.0,
        }
    }
}

/// Which placement [`assign_auto`] took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    /// The partitioner's, [`assign`]: fewest edges cut.
    Cut,
    /// The list schedule's, [`assign_list`]: every worker busy.
    Time,
}

/// What [`assign_auto`] returns: the placement, which of the two it is,
/// and the simulated wall time of each.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoPlacement {
    /// The worker of every task.
    pub assignment: Assignment,
    /// The placement it is.
    pub chosen: Chosen,
    /// The simulated wall time ([`makespan`]) of the partitioner's
    /// placement.
    pub cut_makespan: f64,
    /// The simulated wall time of the list schedule's.
    pub time_makespan: f64,
}

impl AutoPlacement {
    /// The simulated wall time of the placement taken.
    pub fn makespan(&self) -> f64 {
        match self.chosen {
            Chosen::Cut => self.cut_makespan,
            Chosen::Time => self.time_makespan,
        }
    }
}

/// Places `dag` on `workers` for both the network and the wall time: the
/// partitioner's placement ([`assign`], with the sizes and costs of
/// `config`), which cuts about as few edges as METIS, unless the list
/// schedule ([`assign_list`]) is simulated to finish sooner by more than
/// `rule` allows (by default, a quarter of its time) under the cost model of
/// `config`; then the list schedule's.
///
/// Every cut edge is a message, and a placement that cuts many pays for
/// them in transfers and in the workers' time (`config.receive_seconds`);
/// the partitioner's placement, on the other hand, lets workers wait on each
/// other where the graph is a pipeline across its parts (a random DAG whose
/// tasks read recent ones; a wavefront over many workers). Each is
/// simulated ([`makespan`]) and the one that cuts less is kept while it is
/// within the slack: on quick tasks the messages dominate and the
/// partitioner's wins; on tasks that take long, the list schedule's wins
/// where the partitioner's parts would wait.
///
/// # Errors
///
/// As [`assign`] and [`assign_list`], plus [`Error::BadAutoRule`] for a
/// slack below 1 or a gain that is negative or not a number.
///
/// # Complexity
///
/// That of [`assign`] and of [`assign_list`], plus two simulations
/// (O(V log V + E + V log k) each).
///
/// # Example
///
/// ```
/// use graph_assign::{AutoRule, ListConfig, Workers, assign_auto, edge_cut};
/// use graph_core::Topology;
///
/// // Four chains of 100: each worker takes two, and nothing is cut.
/// let edges = (0..4).flat_map(|c| (0..99).map(move |i| (100 * c + i, 100 * c + i + 1)));
/// let dag = Topology::from_edges(400, edges)?;
/// let config = ListConfig::default();
/// let placed = assign_auto(&dag, &Workers::new(2)?, &config, AutoRule::default())?;
/// assert_eq!(edge_cut(&dag, &placed.assignment)?, 0);
/// assert_eq!(placed.makespan(), 200.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_auto(
    dag: &impl Dag,
    workers: &Workers,
    config: &ListConfig<'_>,
    rule: AutoRule,
) -> Result<AutoPlacement, Error> {
    if !(rule.slack >= 1.0 && rule.min_gain >= 0.0) {
        return Err(Error::BadAutoRule {
            slack: rule.slack,
            min_gain: rule.min_gain,
        });
    }
    let dag = Topology::checked(dag)?;
    let cut = assign(&*dag, workers, config.sizes, config.costs)?;
    let time = assign_list(&*dag, workers, config)?;
    let cut_makespan = makespan(&*dag, workers, &cut, config)?;
    let time_makespan = makespan(&*dag, workers, &time, config)?;
    let gain = cut_makespan - time_makespan;
    let worth_it = cut_makespan > rule.slack * time_makespan && gain > rule.min_gain;
    let (assignment, chosen) = if !worth_it {
        (cut, Chosen::Cut)
    } else {
        (time, Chosen::Time)
    };
    Ok(AutoPlacement {
        assignment,
        chosen,
        cut_makespan,
        time_makespan,
    })
}
