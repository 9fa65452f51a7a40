# SPDX-License-Identifier: Apache-2.0
# Records the board's libgpiod accesses (AMBIENT_SPEAKER_GPIO_TRACE) for the
# replay tests in Tests/BoardTests/Traces: sourced by scenarios.sh when the
# kernel command line has hil.gpiotrace=1 (HIL_GPIO_TRACE=1 Tests/HIL/run).
# One speaker per scenario (software.json), stopped with SIGTERM so the trace
# ends with the releases; each trace is printed as "HIL GPIOTRACE [variant]
# name | line" for Tests/HIL/run to write to $HIL_WORK/gpio-traces/variant/name.trace,
# followed by the edges the speaker delivered, as comments ("# delivered …").
# Not a check: it prints INFO lines only.
# shellcheck shell=sh
gpio_trace() {  # $1 name, then the commands that make the scenario (run with eval)
    name=$1; shift
    rm -rf /tmp/state1
    export AMBIENT_SPEAKER_GPIO_TRACE="/tmp/gpio-$name.trace"
    if start_speaker /hil/software.json "/tmp/trace-$name.log"; then
        # Settling, not a check: the lines are requested before the scenario
        # starts, and its last edges are delivered before the stop.
        sleep 0.3
        eval "$*"
        sleep 0.5
        stop_speaker
        grep -E 'gpio: edge ' "/tmp/trace-$name.log" | sed 's/^.*gpio: edge /# delivered /' >> "/tmp/gpio-$name.trace"
        sed "s/^/HIL GPIOTRACE [$V] $name | /" "/tmp/gpio-$name.trace"
        info "gpio trace $name: $(grep -c '^take' "/tmp/gpio-$name.trace") takes, $(grep -c '^read' "/tmp/gpio-$name.trace") reads"
    else
        info "gpio trace $name: the speaker did not come online"
        stop_speaker
    fi
    unset AMBIENT_SPEAKER_GPIO_TRACE
}
# A press without bounce, a bouncy press, bouncy knob turns, the fastest bouncy
# turns, a short turn made while the speaker is stopped (SIGSTOP: both phases'
# edges arrive at once, one line after the other, and only the reorder puts
# them in order), and a long one ending with phase A held active, so that the
# kernel queues overflow (v1: 16 edges, v1 keeping the oldest; v2: 1024,
# keeping the newest) and the board re-reads the levels; then A is let go and
# one clean detent must count exactly.
gpio_trace press "hil-probe press $SIM/sim_gpio17/pull 120"
gpio_trace bouncy-press "hil-probe press $SIM/sim_gpio17/pull 120 bounce"
gpio_trace turns "hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 3 3000 bounce; sleep 0.3; hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull -2 3000 bounce"
gpio_trace fast-turns "hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull -5 500 bounce; sleep 0.3; hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 8 500 bounce"
gpio_trace burst "kill -STOP \$SPK; hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 2 500; kill -CONT \$SPK"
gpio_trace lost-edges "kill -STOP \$SPK; hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 110 500 bounce; pull 23 pull-down; kill -CONT \$SPK; sleep 0.5; pull 23 pull-up; sleep 0.3; hil-probe turn $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 1 3000"
