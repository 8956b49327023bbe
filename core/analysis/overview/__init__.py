"""A whole run at a glance: every variable at every checkpoint (the overview), the rows of one variable,
and one variable's distribution over the steps."""
