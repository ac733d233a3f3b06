%% Reads the workload specs (spec/workloads/<workload>.json), the single
%% source of truth for parameter types and ranges, so that the worker never
%% carries its own copy of those figures.
%%
%% The spec directory is found from where this module was loaded
%% (targets/erlang/ebin -> ../../../spec/workloads); MSGBENCH_SPEC_DIR
%% overrides it.
-module(msgbench_spec).

-export([workload/1, spec_dir/0]).

-spec workload(binary()) -> {ok, map()} | {error, string()}.
workload(Name) ->
    Path = filename:join(spec_dir(), <<Name/binary, ".json">>),
    case file:read_file(Path) of
        {ok, Text} ->
            case msgbench_json:decode(Text) of
                {ok, #{<<"params">> := Params} = Spec} when is_map(Params) -> {ok, Spec};
                {ok, _} -> {error, lists:flatten(io_lib:format("~ts has no params object", [Path]))};
                {error, Reason} -> {error, lists:flatten(io_lib:format("~ts: ~0p", [Path, Reason]))}
            end;
        {error, Reason} ->
            {error, lists:flatten(io_lib:format("cannot read the workload spec ~ts: ~ts",
                                                [Path, file:format_error(Reason)]))}
    end.

-spec spec_dir() -> file:filename().
spec_dir() ->
    case os:getenv("MSGBENCH_SPEC_DIR") of
        Dir when is_list(Dir), Dir =/= "" ->
            Dir;
        _ ->
            Ebin = filename:dirname(code:which(?MODULE)),
            Repo = filename:dirname(filename:dirname(filename:dirname(filename:absname(Ebin)))),
            filename:join([Repo, "spec", "workloads"])
    end.
