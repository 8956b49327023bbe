"""The graph tied to the checkpoint shown: which checkpoint variable each variable node holds, the graph's
variables the checkpoint lacks, and the checkpoint's model weights no node holds. Plain Python (no Qt).

A graph names a variable as its program did (`hidden/weights`, a Keras weight's `dense/kernel`, a TF2
variable's `shared_name`); the checkpoint stores it under a key (the same name in TF1, an object path's
key in TF2) and shows it under its display name. A graph variable is the checkpoint variable whose stored
key, variable name or name shown is its name, in that order of trust.
"""
from __future__ import annotations

from checkpoint_inspector.core.analysis.graph.hierarchy import GraphTree


class CheckpointTie:
    def __init__(self, tree: GraphTree, variables):
        """`variables`: the checkpoint's VariableInfos (core.run.variables), or () without a checkpoint."""
        self.tree = tree
        graph_variables = tree.variable_items()          # graph name -> node id
        by_name: dict[str, object] = {}
        for rank in ("variable_name", "display_name", "name"):  # the last assignment wins: stored keys first
            for info in variables:
                text = getattr(info, rank)
                if text:
                    by_name[text] = info
        self.info_of: dict[str, object] = {}             # graph variable name -> VariableInfo
        self.missing: dict[str, str] = {}                # graph variable name -> node id (the checkpoint lacks it)
        self.node_of: dict[str, str] = {}                # stored key -> node id
        for name, node_id in graph_variables.items():
            info = by_name.get(name)
            if info is None:
                self.missing[name] = node_id
            else:
                self.info_of[name] = info
                self.node_of.setdefault(info.name, node_id)
        held = set(self.node_of)
        self.only_in_checkpoint = [info for info in variables
                                   if info.kind == "variable" and info.name not in held] if variables else []
        self.has_checkpoint = bool(variables)

    def weight_nodes(self) -> dict[str, str]:
        """{stored key: node id} of the model weights the graph and the checkpoint share (no optimizer slots
        or counters: the overlay colours what the model learned)."""
        kinds = {info.name: info.kind for info in self.info_of.values()}
        return {name: node for name, node in self.node_of.items() if kinds.get(name) == "variable"}

    def missing_nodes(self) -> set[str]:
        return set(self.missing.values()) if self.has_checkpoint else set()

    def infos_of_node(self, node_id: str) -> list:
        """The checkpoint variables a node holds: its variable, or a Keras layer's weights that are there."""
        return [self.info_of[name] for name in self.variables_of_node(node_id) if name in self.info_of]

    def variables_of_node(self, node_id: str) -> list[str]:
        """The graph variable names a node holds (present in the checkpoint or not)."""
        node = self.tree[node_id].node
        if node is None:
            return []
        return ([node.variable] if node.variable else []) + list(node.weights)
