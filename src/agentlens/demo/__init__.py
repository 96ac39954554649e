"""`agentlens demo`: a guided tour on real data, one section per job (`tour.SECTIONS`); each
section is a function of a `DemoContext` that prints what it found."""
