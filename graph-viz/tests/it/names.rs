//! `Colour` and `Group` are named as `taskgraph viz` spells them: every name
//! reads back to its value, `age` is `ages`, and an unknown name is an error
//! that lists the names.

use graph_viz::{Colour, Error, Group};

#[test]
fn every_name_reads_back() {
    for colour in Colour::ALL {
        assert_eq!(colour.to_string().parse::<Colour>().unwrap(), colour);
        assert_eq!(colour.to_string(), colour.name());
    }
    for group in Group::ALL {
        assert_eq!(group.to_string().parse::<Group>().unwrap(), group);
    }
    let names: Vec<String> = Colour::ALL.iter().map(Colour::to_string).collect();
    assert_eq!(
        names,
        [
            "order",
            "ages",
            "freed",
            "memoryincreases",
            "memorydecreases",
            "memorypressure",
            "worker",
            "stage",
            "none"
        ]
    );
    assert_eq!("age".parse::<Colour>().unwrap(), Colour::Ages);
}

#[test]
fn unknown_names_are_errors_that_list_the_names() {
    let err = "pressure".parse::<Colour>().unwrap_err();
    assert!(matches!(&err, Error::UnknownColour { name } if name == "pressure"));
    assert_eq!(
        err.to_string(),
        "unknown colouring \"pressure\": expected one of order, ages (or age), freed, \
         memoryincreases, memorydecreases, memorypressure, worker, stage, none"
    );
    // As clap spells them: lower case only.
    assert!("Order".parse::<Colour>().is_err());
    let err = "key".parse::<Group>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown grouping \"key\": expected one of name, stage"
    );
}
