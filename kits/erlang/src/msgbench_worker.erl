%% The worker protocol of every Erlang worker (spec/README.md), one
%% measurement per VM. A target's entry module names its workloads and its
%% table of options in a spec() and calls main/1 (worker) or serve/1 (the
%% socket workload's server half), e.g. targets/erlang's msgbench_erlang:
%%
%%   erl +P <limit> [variant args] -noshell -pa ebin -s msgbench_erlang main
%%
%% main/1 reads one JSON request from stdin, writes JSON lines to stdout
%% (hello, then a result or an error) and halts with status 0. It dispatches
%% on the workload alone: the variant is only echoed in hello, and what the
%% variant means to the worker comes in the request's options (the spec's
%% options module). A result carries raw facts (`measured`, `verify`,
%% `histograms`); the harness derives every metric. Nothing else may reach
%% stdout: logs go to standard_error, and the target points the logger's
%% default handler at standard_error too.
%%
%% serve/1 reads the worker's request from stdin and prints the server's
%% lines (spec/README.md, "Peers").
-module(msgbench_worker).

-export([main/1, handle/3, serve/1, serve/4]).

-export_type([error_kind/0, request/0, spec/0]).

-type error_kind() :: unsupported | resource | internal.

%% The decoded request (spec/request.schema.json): workload, variant,
%% options, params (binary keys), repetition, warmup.
-type request() :: #{binary() => term()}.

%% A worker: its target's name (hello), its workloads and the module of
%% each, its table of options (a msgbench_options module: what the
%% workloads take from the request's options), and the workloads that write
%% sample lines while they run. A workload module exports configure/2 (the request,
%% with its params, and the options read from it, to a config or an error),
%% measure/1 (the config to {ok, #{measured, verify[, histograms]}} or an
%% error) and, for a workload with a server half, serve/3.
-type spec() :: #{target := binary(),
                  workloads := #{binary() => module()},
                  options := module(),
                  sampled := [binary()]}.

-define(UNKNOWN_VARIANT, <<"unknown">>).
-define(SAMPLE_INTERVAL_MS, 1000).

-spec main(spec()) -> no_return().
main(Spec) ->
    ok = io:setopts(standard_io, [binary, {encoding, unicode}]),
    handle(Spec, io:get_line(""), fun emit/1),
    erlang:halt(0).

%% From what stdin gave to the lines to print: hello as soon as the variant
%% is known, then one result or error. Exported so that the tests can drive
%% it without starting a VM.
-spec handle(spec(), binary() | string() | eof | {error, term()}, fun((map()) -> ok)) -> ok.
handle(Spec, Input, Emit) ->
    {VariantName, Request} = read_request(Input),
    Emit(hello(Spec, VariantName)),
    Final = try
                case Request of
                    {ok, Workload, Decoded} -> run(Spec, Workload, VariantName, Decoded, Emit);
                    {error, Kind, Message} -> error_line(Kind, Message)
                end
            catch
                Class:Reason:Stack ->
                    log("worker crashed: ~0p:~0p ~0p", [Class, Reason, Stack]),
                    error_line(internal, io_lib:format("~0p:~0P", [Class, Reason, 20]))
            end,
    Emit(Final).

%% The server half: one request line, then listening, served (or an
%% error) and halt(0). It stops when its stdin closes (the worker is gone),
%% which a process of its own watches.
-spec serve(spec()) -> no_return().
serve(Spec) ->
    ok = io:setopts(standard_io, [binary, {encoding, unicode}]),
    serve(Spec, io:get_line(""), fun emit/1, fun watch_stdin/0),
    erlang:halt(0).

%% From the request line to the server's lines. Exported for the tests.
-spec serve(spec(), binary() | string() | eof | {error, term()}, fun((map()) -> ok),
            fun(() -> term())) -> ok.
serve(Spec, Input, Emit, WatchStdin) ->
    Outcome = try
                  case read_request(Input) of
                      {VariantName, {ok, Workload, Request}} ->
                          serve(Spec, Workload, VariantName, Request, Emit, WatchStdin);
                      {_VariantName, {error, _Kind, _Message} = Error} ->
                          Error
                  end
              catch
                  Class:Reason:Stack ->
                      log("server crashed: ~0p:~0p ~0p", [Class, Reason, Stack]),
                      {error, internal, io_lib:format("the server crashed: ~0p:~0P", [Class, Reason, 20])}
              end,
    case Outcome of
        ok -> ok;
        {error, Kind, Message} -> Emit(error_line(Kind, Message))
    end.

serve(Spec, Workload, VariantName, Request, Emit, WatchStdin) ->
    case prepare(Spec, Workload, Request) of
        {ok, Module, Config} ->
            case erlang:function_exported(Module, serve, 3) of
                true ->
                    log("serving ~ts/~ts ~ts", [Workload, VariantName, msgbench_json:encode(Request)]),
                    Module:serve(Config, Emit, WatchStdin);
                false ->
                    {error, unsupported, ["workload ", Workload, " has no server half"]}
            end;
        {error, _Kind, _Message} = Error ->
            Error
    end.

%% Returns when stdin is closed.
watch_stdin() ->
    case io:get_line("") of
        eof -> eof;
        {error, _} = Error -> Error;
        _Line -> watch_stdin()
    end.

%% {VariantName, {ok, Workload, Request} | {error, Kind, Message}}.
%% The harness wrote the request (spec/request.schema.json): a request it
%% could not have written is a bug somewhere, an internal error.
read_request(eof) ->
    {?UNKNOWN_VARIANT, {error, internal, "no request: stdin was empty"}};
read_request({error, Reason}) ->
    {?UNKNOWN_VARIANT, {error, internal, io_lib:format("cannot read stdin: ~0p", [Reason])}};
read_request(Line) ->
    case msgbench_json:decode(iolist_to_binary(Line)) of
        {ok, #{<<"workload">> := Workload, <<"variant">> := Variant,
               <<"params">> := Params} = Request}
          when is_binary(Workload), is_binary(Variant), Variant =/= <<>>, is_map(Params) ->
            {Variant, {ok, Workload, Request}};
        {ok, _} ->
            {?UNKNOWN_VARIANT,
             {error, internal, "the request must be an object with a workload (string), a variant "
                               "(string), params (object) and options (object)"}};
        {error, Reason} ->
            {?UNKNOWN_VARIANT,
             {error, internal, io_lib:format("the request is not valid JSON: ~0p", [Reason])}}
    end.

run(#{sampled := Sampled} = Spec, Workload, VariantName, Request, Emit) ->
    case prepare(Spec, Workload, Request) of
        {ok, Module, Config} ->
            log("~ts/~ts ~ts", [Workload, VariantName, msgbench_json:encode(Request)]),
            Measure = fun() -> measure(Module, Config) end,
            Outcome = case lists:member(Workload, Sampled) of
                          true -> sampled(Emit, Measure);
                          false -> Measure()
                      end,
            case Outcome of
                {ok, Result} -> Result#{type => result};
                {error, Kind, Message} -> error_line(Kind, Message)
            end;
        {error, Kind, Message} ->
            error_line(Kind, Message)
    end.

%% A long workload (chat: seconds to hours) has how the VM's memory moves
%% over its run as part of its answer (seed 003's erlang-statistics charts):
%% the sampler emits the VM's view about once a second beside the
%% measurement. Short workloads' samples would say nothing.
sampled(Emit, Measure) ->
    Sampler = msgbench_sampler:start(Emit, ?SAMPLE_INTERVAL_MS),
    try Measure() after msgbench_sampler:stop(Sampler) end.

%% The workload's module and its config, from the request's options and
%% params. The params are the harness's, checked against the spec: no range
%% is checked again here. options is always there (possibly {}); a request
%% typed by hand may leave it out.
prepare(#{target := Target, workloads := Workloads, options := OptionsModule}, Workload, Request) ->
    case maps:find(Workload, Workloads) of
        error ->
            {error, unsupported, ["workload ", Workload, " is not implemented by the ", Target,
                                  " target (implemented: ",
                                  lists:join(", ", lists:sort(maps:keys(Workloads))), ")"]};
        {ok, Module} ->
            case msgbench_options:read(OptionsModule, maps:get(<<"options">>, Request, #{})) of
                {ok, Options} ->
                    {module, Module} = code:ensure_loaded(Module),
                    case Module:configure(Request, Options) of
                        {ok, Config} -> {ok, Module, Config};
                        {error, _Kind, _Message} = Error -> Error
                    end;
                {error, Message} ->
                    {error, internal, Message}
            end
    end.

%% The measurement runs in a process of its own: a fresh heap and mailbox
%% (the ring's root is this process), and a crash becomes an internal error.
measure(Module, Config) ->
    Worker = self(),
    {Pid, Monitor} = spawn_monitor(fun() -> Worker ! {self(), measured, Module:measure(Config)} end),
    receive
        {Pid, measured, Outcome} ->
            erlang:demonitor(Monitor, [flush]),
            Outcome;
        {'DOWN', Monitor, process, Pid, Reason} ->
            {error, internal, io_lib:format("the measurement crashed: ~0P", [Reason, 30])}
    end.

hello(#{target := Target}, VariantName) ->
    #{type => hello, target => Target, runtime_version => runtime_version(),
      variant => VariantName}.

error_line(Kind, Message) ->
    #{type => error, kind => Kind, message => unicode:characters_to_binary(Message)}.

%% "OTP 25.2.3 / erts-13.1.5"; the full OTP version is only in a file.
runtime_version() ->
    Release = erlang:system_info(otp_release),
    VersionFile = filename:join([code:root_dir(), "releases", Release, "OTP_VERSION"]),
    Otp = case file:read_file(VersionFile) of
              {ok, Text} -> string:trim(Text);
              {error, _} -> Release
          end,
    iolist_to_binary(["OTP ", Otp, " / erts-", erlang:system_info(version)]).

emit(Line) ->
    ok = io:put_chars(standard_io, [msgbench_json:encode(Line), $\n]).

log(Format, Args) ->
    io:format(standard_error, "msgbench_worker: " ++ Format ++ "~n", Args).
