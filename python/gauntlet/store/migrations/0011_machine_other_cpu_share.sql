-- The machine's other work during each case (issue 29): the CPU that neither the client nor the
-- server used, as a share of the machine's cores (result `bottleneck.machine.other_cpu_share`).
-- Cases stored before have no such figure and keep NULL.

ALTER TABLE measurements ADD COLUMN machine_other_cpu_share REAL;
