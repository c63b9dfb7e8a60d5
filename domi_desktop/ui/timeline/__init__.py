"""The Timeline: the machine's awake, asleep and off spans with every schedule's dues and runs."""
